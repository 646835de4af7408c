/**
 * Temporary directories for the test, reliability and perf suites: one place that makes them
 * and one that removes them. Imports only node built-ins.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp folder, named `<prefix>XXXXXX` (the caller removes it). */
export function tempDir(prefix = 'memauth-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Remove `dir` and everything under it; no error when it is already gone. */
export function rmDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
