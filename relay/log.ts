/** The relay's log: one JSON line per event on stderr, problems at `warn` or `error`. */
export interface Log {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function jsonLog(write: (line: string) => void = (line) => process.stderr.write(line)): Log {
  const line =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  return { info: line("info"), warn: line("warn"), error: line("error") };
}
