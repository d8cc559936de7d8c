import { spawn } from 'node:child_process';

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall-clock time from spawn to exit. */
  ms: number;
}

/**
 * Runs a program to completion (killed after `timeoutMs`) and returns its output. The
 * environment is this process's plus `env`, so that PATH, HOME and the Python shims work.
 */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<ProcessResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** A readable summary of a run for assertion messages. */
export function describeRun(what: string, result: ProcessResult): string {
  return `${what}: exit ${result.code ?? result.signal} after ${result.ms} ms\n--- stdout\n${result.stdout.slice(0, 2000)}\n--- stderr\n${result.stderr.slice(0, 2000)}`;
}
