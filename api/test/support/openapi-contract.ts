/**
 * Checks a real response against the OpenAPI document with a JSON Schema validator (ajv, JSON
 * Schema 2020-12 as OpenAPI 3.1 uses): the status is documented for the operation, every required
 * header is present, every documented header and a JSON body match their schemas, and the content
 * type is one the operation lists.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';

interface MediaType {
  schema?: object;
}
interface HeaderObject {
  required?: boolean;
  schema?: object;
}
interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaType>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components?: object;
}

export interface ContractResult {
  readonly operation: string;
  readonly status: number;
  readonly problems: string[];
}

// ajv-formats is CommonJS: its plugin is the module itself or its `default`, depending on the loader.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((formatsModule as unknown as { default?: FormatsPlugin }).default ?? formatsModule) as unknown as FormatsPlugin;

export class ContractChecker {
  readonly #ajv: Ajv2020;
  readonly #doc: OpenApiDocument;
  /** Operations checked so far (`METHOD path status`), so a test can show what it covered. */
  readonly covered = new Set<string>();

  constructor(document: object) {
    this.#doc = document as OpenApiDocument;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.#ajv);
    this.#ajv.addFormat('binary', true);
    this.#ajv.addSchema({ $id: 'openapi.json', components: this.#doc.components ?? {} });
  }

  /** `pathTemplate` is the document's path (`/api/v1/datasets/{id}`); the body is read only when JSON. */
  async check(method: string, pathTemplate: string, res: Response): Promise<ContractResult> {
    const operation = `${method.toUpperCase()} ${pathTemplate}`;
    const problems: string[] = [];
    const op = this.#doc.paths[pathTemplate]?.[method.toLowerCase()];
    if (!op) return { operation, status: res.status, problems: [`${operation} is not in the document`] };
    const response = op.responses[String(res.status)];
    if (!response) return { operation, status: res.status, problems: [`status ${res.status} is not documented`] };
    this.covered.add(`${operation} ${res.status}`);

    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (header.schema) problems.push(...this.#validate(header.schema, value, `header ${name}`));
    }

    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const content = response.content;
    if (!content) {
      const text = method.toUpperCase() === 'HEAD' ? '' : await res.text();
      if (text !== '') problems.push(`status ${res.status} is documented without a body, got ${text.length} characters`);
      return { operation, status: res.status, problems };
    }
    const media = content[type];
    if (!media) {
      problems.push(`content type "${type}" is not one of ${Object.keys(content).join(', ')}`);
      return { operation, status: res.status, problems };
    }
    if (type === 'application/json' && method.toUpperCase() !== 'HEAD' && media.schema) {
      problems.push(...this.#validate(media.schema, await res.json(), 'body'));
    }
    return { operation, status: res.status, problems };
  }

  #validate(schema: object, value: unknown, what: string): string[] {
    const validate = this.#ajv.compile(rebase(schema));
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  }
}

/** `#/components/...` refs point into the document, which ajv knows as `openapi.json`. */
function rebase(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/components/', '"$ref":"openapi.json#/components/')) as object;
}
