// Work deferred from import to first use (issue 31: "zod schemas built on first use; no work at
// import time"). A module that `validate` or `--version` loads but whose schema, parser or table
// only another command needs holds it as `const thing = lazy(() => build())` and calls `thing()`
// where it is used: importing the module then costs nothing beyond its code.
// test/unit/lint/import-time-work.test.ts finds a module-level schema that is not.

/** A value built by `build` on the first call, the same value on every later one. */
export function lazy<T>(build: () => T): () => T {
  let built = false;
  let value: T | undefined;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}
