// Reading properties: RetrievePropertiesEx with ContinueRetrievePropertiesEx paging, container
// views for "every X under Y", and single-object reads.
import { VsphereClientError, VsphereFault } from './fault.ts';
import {
  continueRetrievePropertiesEx,
  createContainerView,
  destroyView,
  retrievePropertiesEx,
  type RoundTripper,
} from './methods.ts';
import { SessionScoped } from './session-scoped.ts';
import type { MoRef } from './soap.ts';
import { arr, type DataObject, type ObjectContent, type ServiceContent } from './types.ts';

export interface ObjectProps {
  obj: MoRef;
  props: Record<string, unknown>;
}

export interface RetrieveOptions {
  /** page size hint; the server may return fewer and a token */
  maxObjects?: number;
}

/** Every ObjectContent matching `specSet`, following continuation tokens to the last page. */
export async function retrieveAll(rt: RoundTripper, pc: MoRef, specSet: DataObject[], opts: RetrieveOptions = {}): Promise<ObjectContent[]> {
  const out: ObjectContent[] = [];
  let res = await retrievePropertiesEx(rt, pc, specSet, opts.maxObjects);
  // A token can repeat only if the server is broken; guard so we cannot loop forever.
  const seen = new Set<string>();
  for (;;) {
    out.push(...arr(res?.objects));
    const token = res?.token;
    if (!token) break;
    if (seen.has(token)) throw new VsphereClientError('bad-reply', `ContinueRetrievePropertiesEx returned token ${token} twice`, { method: 'ContinueRetrievePropertiesEx', host: '' });
    seen.add(token);
    res = await continueRetrievePropertiesEx(rt, pc, token);
  }
  return out;
}

/** propSet as a map; a missingSet entry (other than session expiry, handled below us) throws. */
export function toObjectProps(oc: ObjectContent, host = ''): ObjectProps {
  const props: Record<string, unknown> = {};
  for (const p of arr(oc.propSet)) props[p.name] = p.val;
  for (const m of arr(oc.missingSet)) {
    const name = m.fault?.fault?._type ?? 'SystemError';
    // A property that is simply unset comes back absent, not missing; a missing one is an error.
    throw new VsphereFault(name, `cannot read ${oc.obj.type} ${oc.obj.value} property ${m.path}: ${name}${m.fault?.localizedMessage ? `: ${m.fault.localizedMessage}` : ''}`, {
      method: 'RetrievePropertiesEx',
      host,
      detail: m.fault?.fault ?? {},
    });
  }
  return { obj: oc.obj, props };
}

/** Properties of one object. */
export async function readProps(rt: RoundTripper, sc: ServiceContent, obj: MoRef, paths: string[]): Promise<Record<string, unknown>> {
  const spec: DataObject = {
    propSet: [{ type: obj.type, pathSet: paths }],
    objectSet: [{ obj, skip: false }],
  };
  const objs = await retrieveAll(rt, sc.propertyCollector, [spec]);
  const first = objs[0];
  if (!first) {
    throw new VsphereClientError('not-found', `${obj.type} ${obj.value} not found (RetrievePropertiesEx returned no object)`, { method: 'RetrievePropertiesEx', host: '' });
  }
  return toObjectProps(first).props;
}

/**
 * Every object of `types` under `container` (recursive) with `paths` read from each, via a
 * ContainerView that is destroyed afterwards even on error (views accumulate per session).
 */
export async function listView(
  rt: RoundTripper,
  sc: ServiceContent,
  container: MoRef,
  types: string[],
  paths: string[],
  opts: RetrieveOptions = {},
): Promise<ObjectProps[]> {
  const viewManager = sc.viewManager;
  if (!viewManager) throw new VsphereClientError('unsupported', 'server has no ViewManager', { method: 'CreateContainerView', host: '' });
  // A view lives as long as its session: when the session expires between CreateContainerView and
  // the read, the read replayed after the re-login says ManagedObjectNotFound for the view; the
  // view is made again, once (session-scoped.ts).
  const views = new SessionScoped(rt, () => createContainerView(rt, viewManager, container, types, true));
  try {
    return await views.use(async (view) => {
      const spec: DataObject = {
        propSet: types.map((type) => ({ type, pathSet: paths })),
        objectSet: [
          {
            obj: view,
            skip: true,
            selectSet: [{ _type: 'TraversalSpec', name: 'view', type: 'ContainerView', path: 'view', skip: false }],
          },
        ],
      };
      const objs = await retrieveAll(rt, sc.propertyCollector, [spec], opts);
      return objs.map((o) => toObjectProps(o));
    });
  } finally {
    // destroyed even on error: views accumulate per session
    await views.destroy((view) => destroyView(rt, view));
  }
}
