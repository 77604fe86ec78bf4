// Local lint rules for the repository's package boundaries. eslint-plugin-import-x's
// no-cycle skips `import type` edges, and a type-only cycle is still a cycle between modules, so the
// import graph here is read with TypeScript's own pre-processor and every edge counts.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..');
/** Every top-level folder that holds code. Workspaces are the ones with a package.json. */
export const CODE_FOLDERS = ['shared', 'search', 'exporter', 'query-runner', 'api', 'dashboard', 'test-support', 'scripts', 'load-tests', 'test'];
const SKIP_DIRS = new Set(['node_modules', '.data', 'dist', 'generated', 'coverage']);
const SOURCE = /\.(ts|js|mjs)$/;

function readPackages() {
  const byName = new Map();
  for (const folder of CODE_FOLDERS) {
    const file = path.join(ROOT, folder, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
    byName.set(pkg.name, { folder, exports: pkg.exports ?? {} });
  }
  return byName;
}

const packages = readPackages();

function folderOf(file) {
  const rel = path.relative(ROOT, file);
  return rel.startsWith('..') ? undefined : rel.split(path.sep)[0];
}

/** `@uda/x/y` → the file x's `exports` names for `./y`, or undefined when x does not export it. */
function resolvePackage(specifier) {
  const match = /^(@uda\/[^/]+)(?:\/(.*))?$/.exec(specifier);
  if (!match) return { kind: 'external' };
  const pkg = packages.get(match[1]);
  if (!pkg) return { kind: 'unknown-package', name: match[1] };
  const target = pkg.exports[match[2] ? `./${match[2]}` : '.'];
  if (typeof target !== 'string') return { kind: 'not-exported', name: match[1], sub: match[2] ?? '.' };
  return { kind: 'file', file: path.join(ROOT, pkg.folder, target) };
}

function resolve(fromFile, specifier) {
  if (specifier.startsWith('.')) return path.resolve(path.dirname(fromFile), specifier);
  const hit = resolvePackage(specifier);
  return hit.kind === 'file' ? hit.file : undefined;
}

function sourceFiles(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(full, out);
    else if (SOURCE.test(entry.name)) out.push(full);
  }
  return out;
}

function buildGraph() {
  const files = CODE_FOLDERS.filter((f) => fs.existsSync(path.join(ROOT, f))).flatMap((f) => sourceFiles(path.join(ROOT, f), []));
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const edges = importedFiles.map((i) => resolve(file, i.fileName)).filter((t) => t !== undefined && known.has(t));
    graph.set(file, [...new Set(edges)]);
  }
  return graph;
}

/** Tarjan's strongly connected components: every module on a cycle → the members of its cycle. */
function cyclesOf(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const inCycle = new Map();
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    const selfLoop = (graph.get(v) ?? []).includes(v);
    if (component.length > 1 || selfLoop) for (const m of component) inCycle.set(m, component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return inCycle;
}

let cached;
/** One graph per lint run: the rule is called per file, the graph is the whole repository's. */
export function repositoryCycles() {
  cached ??= cyclesOf(buildGraph());
  return cached;
}

function importSources(node) {
  return node.source && typeof node.source.value === 'string' ? node.source : undefined;
}

/** The visitors of every node that names a module (import, re-export, dynamic import), each checked by `check`. */
function onEveryImport(check) {
  return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
}

/**
 * The exceptions to "a workspace uses only @uda/shared": a workspace's declared export that named
 * workspaces use on purpose, with why. Folders without a package.json (scripts, load-tests, test)
 * are where workspaces are put together, and may import any declared export.
 */
export const DECLARED_INTERFACES = {
  // The search engine (tokenisation, the index format, ranking) is one library: the exporter builds
  // the indexes, the query-runner ranks over them.
  '@uda/search': { importers: ['exporter', 'query-runner'] },
  // The dashboard types its fetches with the API's answer schemas (types only: nothing of the API
  // is bundled into the browser).
  '@uda/api': { importers: ['dashboard'], typeOnly: true },
};
/** Reached from any workspace: shared code, and the test harness (only tests may: `test-helpers`). */
const OPEN_WORKSPACES = new Set(['shared', 'test-support']);

const isWorkspace = (folder) => fs.existsSync(path.join(ROOT, folder, 'package.json'));
const typeOnly = (node) =>
  node.importKind === 'type' || node.exportKind === 'type' || (node.specifiers?.length > 0 && node.specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type'));

/**
 * A workspace uses another only through @uda/shared, @uda/test-support or a declared interface; the
 * test-support workspace is the harness that starts the real workspaces, so it may use any of them.
 */
function mayImportWorkspace(folder, targetFolder, node) {
  if (folder === undefined || folder === targetFolder || !isWorkspace(folder) || folder === 'test-support') return true;
  if (OPEN_WORKSPACES.has(targetFolder)) return true;
  const declared = Object.entries(DECLARED_INTERFACES).find(([name]) => packages.get(name)?.folder === targetFolder)?.[1];
  return declared !== undefined && declared.importers.includes(folder) && (!declared.typeOnly || typeOnly(node));
}

const workspaceImports = {
  meta: {
    type: 'problem',
    docs: { description: 'Another code folder is reached only through a declared package export (`@uda/x/y`).' },
    schema: [],
    messages: {
      relative: 'Import {{target}} through a declared export of its package (`@uda/<name>/<entry>` in its package.json `exports`), not by a relative path out of {{folder}}/.',
      notExported: '{{name}} does not export "{{sub}}": add it to that package.json `exports` or use an exported entry.',
      unknown: '{{name}} is not a workspace of this repository.',
      otherWorkspace:
        '{{folder}}/ may not import {{target}}: a workspace uses another only through @uda/shared (or @uda/test-support in tests) or a declared interface (DECLARED_INTERFACES in eslint/boundaries.js).',
    },
  },
  create(context) {
    const file = context.physicalFilename;
    const folder = folderOf(file);
    const check = (node) => {
      const source = importSources(node);
      if (!source) return;
      const specifier = source.value;
      if (specifier.startsWith('.')) {
        const targetFolder = folderOf(path.resolve(path.dirname(file), specifier));
        if (folder !== undefined && targetFolder !== folder) context.report({ node: source, messageId: 'relative', data: { target: targetFolder ?? specifier, folder } });
        return;
      }
      const hit = resolvePackage(specifier);
      if (hit.kind === 'not-exported') context.report({ node: source, messageId: 'notExported', data: { name: hit.name, sub: hit.sub } });
      if (hit.kind === 'unknown-package') context.report({ node: source, messageId: 'unknown', data: { name: hit.name } });
      if (hit.kind === 'file' && !mayImportWorkspace(folder, folderOf(hit.file), node)) context.report({ node: source, messageId: 'otherWorkspace', data: { folder, target: specifier } });
    };
    return onEveryImport(check);
  },
};

const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'No import cycles between modules, type-only imports included.' },
    schema: [],
    messages: { cycle: 'Import cycle (type-only imports count): {{members}}. Move what both sides need into a module of its own.' },
  },
  create(context) {
    return {
      Program(node) {
        const members = repositoryCycles().get(context.physicalFilename);
        if (!members) return;
        const names = members.map((m) => path.relative(ROOT, m)).sort();
        context.report({ node, messageId: 'cycle', data: { members: names.join(' ↔ ') } });
      },
    };
  },
};

/**
 * Folders with one door: code outside such a folder imports only its door file, so what the folder
 * keeps to itself can change without touching its callers. Tests inside the folder are inside.
 */
export const FOLDER_DOORS = { 'api/src/billing': 'index.ts', 'api/src/billing/credit': 'index.ts' };

const insideOf = (file, folder) => path.relative(ROOT, file).startsWith(`${folder}/`);

/** The door `target` must be reached through from `file`: of the outermost folder with a door that holds the target and not the file. */
function doorFor(file, target) {
  const folders = Object.keys(FOLDER_DOORS).filter((folder) => insideOf(target, folder) && !insideOf(file, folder));
  const folder = folders.sort((a, b) => a.length - b.length)[0];
  return folder && { folder, door: path.join(ROOT, folder, FOLDER_DOORS[folder]) };
}

const folderDoors = {
  meta: {
    type: 'problem',
    docs: { description: 'A folder with a door (FOLDER_DOORS) is reached from outside only through its door file.' },
    schema: [],
    messages: { door: 'Import {{folder}}/ through its door ({{door}}), not {{target}}: what the folder does not export there is its own.' },
  },
  create(context) {
    const file = context.physicalFilename;
    const check = (node) => {
      const source = importSources(node);
      if (!source) return;
      const target = resolve(file, source.value);
      const door = target && doorFor(file, target.replace(/\.js$/, '.ts'));
      if (!door || target === door.door) return;
      context.report({ node: source, messageId: 'door', data: { folder: door.folder, door: path.relative(ROOT, door.door), target: path.relative(ROOT, target) } });
    };
    return onEveryImport(check);
  },
};

/** Tests, their helpers and benchmarks: `*.test.ts`, any `test/` or `bench/` folder, the test-support workspace and the load tests. */
export function isTestCode(file) {
  const parts = path.relative(ROOT, file).split(path.sep);
  return /\.test\.[cm]?[jt]s$/.test(file) || parts[0] === 'test-support' || parts[0] === 'load-tests' || parts.slice(0, -1).some((part) => part === 'test' || part === 'bench');
}

/** A `test/` folder inside a `src/` folder: test helpers belong beside `src/`, not in it. */
function testFolderInSource(file) {
  const parts = path.relative(ROOT, file).split(path.sep).slice(0, -1);
  const src = parts.indexOf('src');
  return src >= 0 && parts.indexOf('test', src) > src;
}

const testHelpers = {
  meta: {
    type: 'problem',
    docs: { description: 'Test helpers live in @uda/test-support or a test/ folder beside src/, and only tests import them.' },
    schema: [],
    messages: {
      inSource: 'Test helpers live in @uda/test-support or a test/ folder beside src/ (e.g. api/test/support/), never in a test/ folder under src/.',
      imported: 'Only tests import test helpers ({{target}}): production code must not depend on them.',
    },
  },
  create(context) {
    const file = context.physicalFilename;
    const check = (node) => {
      const source = importSources(node);
      if (!source || isTestCode(file)) return;
      const specifier = source.value;
      const target = specifier.startsWith('.') ? path.resolve(path.dirname(file), specifier) : resolve(file, specifier);
      const helper = specifier.startsWith('@uda/test-support') || (target !== undefined && isTestCode(target) && !/\.test\.[cm]?[jt]s$/.test(target));
      if (helper) context.report({ node: source, messageId: 'imported', data: { target: specifier } });
    };
    return {
      Program(node) {
        if (testFolderInSource(file)) context.report({ node, messageId: 'inSource' });
      },
      ...onEveryImport(check),
    };
  },
};


/**
 * The composition root (STYLE §5): `api/src/services.ts` builds every service, and the code that
 * receives them names only what it uses (its own deps type), so the root is imported, as a value
 * or a type, only by what starts or assembles the whole: `main.ts`, the app factories, tests and
 * their support, and benchmarks (each starts its own services). Anything else importing it would
 * tie a feature to all 28 services again, and the features' own types back into the root: a cycle.
 */
export const COMPOSITION_ROOT = 'api/src/services.ts';
export const COMPOSITION_ROOT_IMPORTERS = [
  'api/src/main.ts',
  // The app factories: the public app, the admin app, the ops port.
  'api/src/app.ts',
  'api/src/admin/app.ts',
  'api/src/ops-app.ts',
  'api/test/',
  'api/bench/',
  'test-support/',
  'test/',
];

function mayImportRoot(file) {
  const rel = path.relative(ROOT, file);
  return /\.test\.ts$/.test(rel) || COMPOSITION_ROOT_IMPORTERS.some((allowed) => (allowed.endsWith('/') ? rel.startsWith(allowed) : rel === allowed));
}

const compositionRoot = {
  meta: {
    type: 'problem',
    docs: { description: 'Only main.ts, the app factories, tests and benchmarks import the composition root (services.ts).' },
    schema: [],
    messages: { root: 'Import {{root}} only from main.ts, an app factory, a test or a benchmark: take the services this module uses as its own deps type (e.g. `{ readonly db: Db }`) instead.' },
  },
  create(context) {
    const file = context.physicalFilename;
    if (mayImportRoot(file)) return {};
    const rootFile = path.join(ROOT, COMPOSITION_ROOT);
    const check = (node) => {
      const source = importSources(node);
      if (!source) return;
      const target = resolve(file, source.value);
      if (target && target.replace(/\.js$/, '.ts') === rootFile) context.report({ node: source, messageId: 'root', data: { root: COMPOSITION_ROOT } });
    };
    return onEveryImport(check);
  },
};


export const boundaries = { rules: { 'workspace-imports': workspaceImports, 'no-cycle': noCycle, 'folder-doors': folderDoors, 'test-helpers': testHelpers, 'composition-root': compositionRoot } };
