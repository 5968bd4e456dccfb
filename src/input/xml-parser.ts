// fast-xml-parser for the XML handed to us (a vim25 SOAP response, diskspd's -Rxml output), loaded
// on the first parse rather than at import (issue 31): `validate` loads the SOAP transport and the
// diskspd reader with their providers and parses no XML. It is required as its CommonJS build,
// which the package ships as one file; its ES module build is ~40 files of six packages.
import { createRequire } from 'node:module';
import type * as Fxp from 'fast-xml-parser';
import { lazy } from '../lazy.ts';

const fxp = lazy(() => createRequire(import.meta.url)('fast-xml-parser') as typeof Fxp);

export type XmlParserOptions = NonNullable<ConstructorParameters<typeof Fxp.XMLParser>[0]>;

/** A fast-xml-parser XMLParser with `options` (the package loaded now, if it is not yet). */
export function xmlParser(options: XmlParserOptions): Fxp.XMLParser {
  return new (fxp().XMLParser)(options);
}
