/**
 * JSON objects with one field whose value is JSON text already (result rows): the text is copied
 * in as bytes, never parsed and serialised again. The output is exactly what `JSON.stringify` of
 * `{ ...before, [field]: JSON.parse(raw), ...after }` gives, keys in that order.
 */
const encoder = new TextEncoder();

export function jsonWithRawField(before: object, field: string, raw: Uint8Array, after: object = {}): Buffer {
  const head = JSON.stringify(before);
  const tail = JSON.stringify(after);
  const opening = `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}${JSON.stringify(field)}:`;
  const closing = tail.length > 2 ? `,${tail.slice(1)}` : '}';
  return Buffer.concat([encoder.encode(opening), raw, encoder.encode(closing)]);
}
