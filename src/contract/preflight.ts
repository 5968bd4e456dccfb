// What `storsweep preflight` asks of a target before a night's sweep (issue 29), and the shape of
// its answers. A provider offers it through its Composition (`preflight`), from a file of its own
// folder (src/providers/<name>/preflight.ts); src/preflight/ runs it and prints the checklist.
// Everything here is read-only on the host: the canary, which creates, goes through the executor.
import type { PlannedStep } from './step.ts';

/** ✓ nothing to do, ✗ the run would fail (preflight exits 1), ! worth a look (exit 0) */
export type CheckStatus = 'ok' | 'fail' | 'warn';

export interface PreflightCheck {
  /** what was checked, short: `connection`, `login`, `version`, `privilege Datastore.AllocateSpace`, `capacity` */
  check: string;
  status: CheckStatus;
  /** what was found, in words (no secret) */
  detail: string;
  /** what to do about a ✗ or !: one sentence */
  remedy?: string;
}

/**
 * Where a plan puts data: a LUN it formats, a datastore that exists already, a host folder whose
 * volume holds a virtual disk file (Hyper-V's VHDX), or a host disk passed through whole.
 */
export type SpacePlace = { kind: 'lun'; device: string } | { kind: 'datastore'; name: string } | { kind: 'volume'; folder: string } | { kind: 'disk'; name: string };

/** What one permutation puts on a place: a thick disk's whole size; a thin disk what the workload writes. */
export interface SpaceNeed {
  place: SpacePlace;
  bytes: number;
  /** e.g. `4000 GiB eagerzeroedthick disk` */
  what: string;
}

/** A place's room as the host reports it now: the bytes a plan may fill (null: unknown, with why). */
export interface SpaceHave {
  place: SpacePlace;
  bytes: number | null;
  /** how it was read: `LUN naa.… is 20.0 GiB (esxcli storage core device list)` */
  detail: string;
}

export interface TargetPreflight {
  /**
   * Pure: what one permutation's steps put where. `writtenBytes` is what its workload writes (the
   * profile's file size): all a thin disk takes.
   */
  spaceNeeds(steps: readonly PlannedStep[], writtenBytes: number): SpaceNeed[];
  /**
   * Read-only: the usable bytes of each place (a LUN: its size less the file system's reserve; a
   * datastore: its free space). `shared`: through the run's own session (the run's capacity gate:
   * no extra login), else a session of its own, closed after.
   */
  spaceOf(places: readonly SpacePlace[], o?: { shared?: boolean }): Promise<SpaceHave[]>;
  /** Read-only checks of the endpoint: connection, host key or thumbprint, login, version, privileges, host metrics. */
  checks?(steps: readonly PlannedStep[]): Promise<PreflightCheck[]>;
}

/** A place as text, for keys and messages. */
export function placeText(p: SpacePlace): string {
  if (p.kind === 'lun') return `LUN ${p.device}`;
  if (p.kind === 'volume') return `volume of ${p.folder}`;
  return p.kind === 'disk' ? `host disk ${p.name}` : `datastore ${p.name}`;
}

/** What a place is called in a remedy: `a larger LUN`. */
export const PLACE_NOUN: Record<SpacePlace['kind'], string> = { lun: 'LUN', datastore: 'datastore', volume: 'volume', disk: 'disk' };
