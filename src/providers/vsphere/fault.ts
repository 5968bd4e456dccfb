// Typed vSphere faults: a SOAP fault or a task error, named by its vim fault type.
import { SoapFault } from './soap.ts';
import { decodeNode, type DataObject, type LocalizedMethodFault } from './types.ts';

/** The server refused a call; `faultName` is the vim fault type, e.g. 'InvalidLogin', 'NotFound'. */
export class VsphereFault extends Error {
  override readonly name = 'VsphereFault';
  constructor(
    readonly faultName: string,
    message: string,
    readonly details: { method: string; host: string; detail: DataObject },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A conclusion this client drew from what the server returned — an object in no listing, a
 * capability the server lacks, a reply that breaks the protocol, a wait that ran out. Never a
 * server fault: isFault() does not match it and nothing retries it.
 */
export class VsphereClientError extends Error {
  override readonly name = 'VsphereClientError';
  constructor(
    readonly reason: 'not-found' | 'unsupported' | 'bad-reply' | 'timeout' | 'closed',
    message: string,
    readonly details: { method: string; host: string },
  ) {
    super(message);
  }
}

export function isNotFoundHere(err: unknown): err is VsphereClientError {
  return err instanceof VsphereClientError && err.reason === 'not-found';
}

/** A task ended in state `error`. `faultName` is the vim fault type of `info.error.fault`. */
export class TaskFailed extends Error {
  override readonly name = 'TaskFailed';
  constructor(
    readonly faultName: string,
    message: string,
    readonly details: { task: string; taskName: string; entity: string; detail: DataObject },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function fromSoapFault(f: SoapFault, host: string): VsphereFault {
  const detail = (f.detail ? decodeNode(f.detail, f.faultName) : {}) as DataObject;
  const text = f.faultString || f.faultName;
  return new VsphereFault(f.faultName, `${f.method} on ${host}: ${f.faultName}: ${text}`, { method: f.method, host, detail }, { cause: f });
}

export function fromTaskError(err: LocalizedMethodFault | undefined, task: { task: string; taskName: string; entity: string }): TaskFailed {
  const fault = err?.fault ?? {};
  const faultName = fault._type ?? 'SystemError';
  const msg = err?.localizedMessage || faultName;
  return new TaskFailed(faultName, `task ${task.taskName || task.task} on ${task.entity || '?'} failed: ${faultName}: ${msg}`, { ...task, detail: fault });
}

export function isFault(err: unknown, ...names: string[]): err is VsphereFault {
  return err instanceof VsphereFault && names.includes(err.faultName);
}

export function isNotAuthenticated(err: unknown): boolean {
  if (err instanceof VsphereFault) return err.faultName === 'NotAuthenticated';
  if (err instanceof SoapFault) return err.faultName === 'NotAuthenticated';
  return false;
}
