// The run's JSON log (pino, one object per line) in the run directory. Every event passes the
// value-based redactor first, and pino's path redaction covers the keys that hold secrets.
import pino from 'pino';
import { redactDeep } from '../config/secrets.ts';
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
  return {
    event(e) {
      const level = e.type === 'failure' ? 'error' : e.type === 'message' ? e.level : 'info';
      logger[level](redactDeep(e) as object, e.type);
    },
    close() {
      dest.flushSync();
    },
  };
}
