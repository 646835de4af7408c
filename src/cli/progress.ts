/** Progress reporting for long commands (bench), on stderr so stdout stays machine-readable. */

/** The stream a progress reporter writes to (stderr in production). */
export interface ProgressStream {
  write(s: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Receives `(done, total, label)` updates; `finish()` ends the display. */
export interface Progress {
  update(done: number, total: number, label: string): void;
  finish(): void;
}

/** `12s`, `3m04s`, `1h02m`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Estimated time left from the rate so far; `?` before the first item is done. */
export function eta(elapsedMs: number, done: number, total: number): string {
  if (done <= 0 || total <= 0) return '?';
  return formatDuration((elapsedMs * (total - done)) / done);
}

/**
 * A progress reporter for `stream`. On a TTY: one line redrawn in place (bar, percent, count,
 * ETA, label), at most every 100 ms, cleared by `finish()`. Otherwise: a plain line each time
 * another ~10% is done (and at 100%), so logs stay short.
 *
 * @param prefix - what is progressing, e.g. `bench`.
 * @param now - clock in ms, for tests.
 */
export function createProgress(stream: ProgressStream, prefix: string, now: () => number = Date.now): Progress {
  const start = now();
  if (stream.isTTY === true) {
    let lastDraw = 0;
    let drawn = false;
    return {
      update(done, total, label) {
        const t = now();
        if (done < total && t - lastDraw < 100) return;
        lastDraw = t;
        const frac = total > 0 ? Math.min(1, done / total) : 0;
        const width = 24;
        const filled = Math.round(frac * width);
        const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
        let line = `${prefix} ${bar} ${String(Math.floor(frac * 100)).padStart(3)}% ${done}/${total} ETA ${eta(t - start, done, total)} ${label}`;
        const cols = stream.columns !== undefined && stream.columns >= 20 ? stream.columns : 80;
        if (line.length > cols - 1) line = line.slice(0, Math.max(0, cols - 2));
        stream.write(`\r\x1b[2K${line}`);
        drawn = true;
      },
      finish() {
        if (drawn) stream.write('\r\x1b[2K');
      },
    };
  }
  let lastBucket = -1;
  return {
    update(done, total, label) {
      if (total <= 0) return;
      const pct = Math.floor((Math.min(done, total) / total) * 100);
      const bucket = Math.floor(pct / 10);
      if (bucket <= lastBucket && done < total) return;
      if (done >= total && lastBucket === 10) return;
      lastBucket = done >= total ? 10 : bucket;
      stream.write(`${prefix}: ${pct}% (${done}/${total}) elapsed ${formatDuration(now() - start)}, ETA ${eta(now() - start, done, total)}${label ? ` — ${label}` : ''}\n`);
    },
    finish() {
      // plain lines need no clean-up
    },
  };
}
