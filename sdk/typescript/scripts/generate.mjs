// `npm run generate`: src/generated/openapi.ts from openapi/openapi.json,
// openapi-typescript's output with one option and one correction. The
// option, `defaultNonNullable: false`: a property's `default` says what its
// absence means, not that the server always sends it (a match player's
// `backfill` is sent only when `true`), so it stays optional. The
// correction: an object with both `properties` and `additionalProperties`.
//
// In JSON Schema, `additionalProperties` rules only the keys that are not
// among `properties` (a ticket's `attributes`: `mmr`, `latencies` and
// `data`, and the mode's declared attributes, each a number, a text or a
// list of texts). openapi-typescript writes it as
// `{ mmr?: …; latencies?: …; data?: … } & { [key: string]: AttributeValue }`,
// where TypeScript holds every key to the index signature too, so no
// `latencies` or `data` object fits. The correction writes one object type
// whose index signature also takes the declared properties' types, which is
// how TypeScript says "these keys, and any other of this type".
import { writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import openapiTS, { astToString, COMMENT_HEADER, transformSchemaObject, tsUnion, UNDEFINED } from "openapi-typescript";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The checked-in document. */
export const documentPath = resolve(root, "../../openapi/openapi.json");

/** Whether `schema` declares properties and a schema for the other keys. */
function keyedAndOpen(schema) {
  const extra = schema.additionalProperties;
  return (
    Object.keys(schema.properties ?? {}).length > 0 &&
    extra !== null && typeof extra === "object" && Object.keys(extra).length > 0 &&
    !schema.patternProperties
  );
}

/** openapi-typescript's `transform` hook: the correction above, else its own output. */
function transform(schema, options) {
  if (!keyedAndOpen(schema)) return undefined;
  // The declared properties alone, as openapi-typescript types them.
  const declared = transformSchemaObject({ ...schema, additionalProperties: undefined }, options);
  if (!ts.isTypeLiteralNode(declared)) return undefined;
  const others = transformSchemaObject(schema.additionalProperties, options, true);
  const properties = declared.members.filter(ts.isPropertySignature);
  // An optional property may be `undefined`, which the index type must take too.
  const absent = properties.some((p) => p.questionToken) ? [UNDEFINED] : [];
  const index = ts.factory.createIndexSignature(
    undefined,
    [ts.factory.createParameterDeclaration(undefined, undefined, "key", undefined, ts.factory.createKeywordTypeNode(ts.SyntaxKind.StringKeyword))],
    tsUnion([others, ...properties.flatMap((p) => (ts.isUnionTypeNode(p.type) ? p.type.types : [p.type])), ...absent]),
  );
  return ts.factory.createTypeLiteralNode([...declared.members, index]);
}

/** The generated file's text for the document at `path`. */
export async function generate(path = documentPath) {
  const ast = await openapiTS(pathToFileURL(path), { transform, silent: true, defaultNonNullable: false });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = resolve(root, "src/generated/openapi.ts");
  writeFileSync(out, await generate(), "utf8");
  console.log(`${documentPath} → ${out}`);
}
