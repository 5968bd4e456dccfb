// The run's JSON log (pino, one object per line) in the run directory. Every event passes the
// value-based redactor first, and pino's path redaction covers the keys that hold secrets.
import pino from 'pino';
import { redactDeep } from '../input/secrets.ts';
import type { ProgressEvent } from './progress.ts';

export interface RunLog {
  event(e: ProgressEvent): void;
  close(): void;
}

export function createRunLog(file: string): RunLog {
  const dest = pino.destination({ dest: file, sync: true, mkdir: true });
  const logger = pino(
    {
      base: { pid: process.pid },
      redact: { paths: ['password', '*.password', 'passphrase', '*.passphrase', 'cookie', '*.cookie'], censor: '***' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    dest,
  );
  // A write error (a full disk) disables the log: pino's flushSync would retry it forever, and
  // the database, not the log, is the record of the run.
  let broken = false;
  dest.on('error', () => {
    broken = true;
  });
  return {
    event(e) {
      if (broken) return;
      const level = e.type === 'failure' ? 'error' : e.type === 'message' ? e.level : 'info';
      try {
        logger[level](redactDeep(e) as object, e.type);
      } catch {
        broken = true;
      }
    },
    close() {
      if (!broken) dest.flushSync();
    },
  };
}
