/**
 * `--cpu-prof` for the performance suite: a V8 CPU profile through `node:inspector`, written as
 * a `.cpuprofile` file (open it in Chrome DevTools or speedscope), plus a summary of the
 * functions with the most self time.
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

/** The subset of a V8 `.cpuprofile` the summary reads. */
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

/** One line of the self-time summary. */
export interface SelfTime {
  readonly fn: string;
  readonly where: string;
  readonly selfMs: number;
  readonly share: number;
}

/** Self time per function (summed over its call sites), largest first. */
export function selfTimes(profile: CpuProfile, top = 25): SelfTime[] {
  const byNode = new Map<number, ProfileNode>(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // a sample's time is the delta to the next sample
    const id = samples[i] as number;
    const dt = deltas[i + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0) || 1;
  const agg = new Map<string, { fn: string; where: string; us: number }>();
  for (const [id, us] of selfUs) {
    const n = byNode.get(id);
    if (!n) continue;
    const fn = n.callFrame.functionName || '(anonymous)';
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/^.*\/(dist|node_modules)\//, '$1/');
    const where = url ? `${url}:${n.callFrame.lineNumber + 1}` : '';
    const key = `${fn}\u0000${where}`;
    const a = agg.get(key) ?? { fn, where, us: 0 };
    a.us += us;
    agg.set(key, a);
  }
  return [...agg.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, top)
    .map((a) => ({ fn: a.fn, where: a.where, selfMs: a.us / 1000, share: a.us / total }));
}

/** A running CPU profile. */
export class Profiler {
  private readonly session = new Session();

  private post<T>(method: string, params?: object): Promise<T> {
    return new Promise((resolve, reject) => {
      this.session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res as T)));
    });
  }

  /** Start sampling (interval in µs). */
  async start(intervalUs = 100): Promise<void> {
    this.session.connect();
    await this.post('Profiler.enable');
    await this.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await this.post('Profiler.start');
  }

  /** Stop, write the profile to `file`, and return it. */
  async stop(file: string): Promise<CpuProfile> {
    const { profile } = await this.post<{ profile: CpuProfile }>('Profiler.stop');
    this.session.disconnect();
    writeFileSync(file, JSON.stringify(profile));
    return profile;
  }
}
