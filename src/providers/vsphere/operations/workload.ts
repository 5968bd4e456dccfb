// The workload step of a guest reached through guest operations: its provider is vsphere then. The
// executor runs it through the composition's workload endpoint; the provider applies nothing.
import { workloadStepSchema } from '../../guest.ts';
import { vsphereOperation } from '../host.ts';

export const fio = vsphereOperation({ name: 'fio', schema: workloadStepSchema, estimateSec: () => 0 });
export const diskspd = vsphereOperation({ name: 'diskspd', schema: workloadStepSchema, estimateSec: () => 0 });
