/**
 * k8s/ is rendered from the chart (scripts/k8s/render.sh) and must never drift from it: a fresh
 * render has to equal the committed files byte for byte. The kustomize base and the dev overlay
 * must also build and validate.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseObjects, repo, run, tools, validateObject } from '@uda/test-support/k8s';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('k8s/ plain manifests', () => {
  let fresh: string;
  beforeAll(() => {
    fresh = mkdtempSync(join(tmpdir(), 'uda-k8s-render-'));
    execFileSync(join(repo, 'scripts', 'k8s', 'render.sh'), [fresh], { stdio: ['ignore', 'ignore', 'pipe'] });
  });
  afterAll(() => rmSync(fresh, { recursive: true, force: true }));

  it('are up to date with the chart (run scripts/k8s/render.sh when this fails)', () => {
    const committed = join(repo, 'k8s');
    const list = (dir: string) => filesUnder(dir).map((file) => relative(dir, file)).sort();
    expect(list(committed)).toEqual(list(fresh));
    const stale = list(fresh).filter(
      (file) => readFileSync(join(fresh, file), 'utf8') !== readFileSync(join(committed, file), 'utf8'),
    );
    expect(stale).toEqual([]);
  });

  it.each(['base', 'overlays/dev'])('%s builds with kustomize and validates', (dir) => {
    const built = run(tools().kubectl, ['kustomize', join(repo, 'k8s', dir)]);
    expect(built.stderr).toBe('');
    expect(built.status).toBe(0);
    const objects = parseObjects(built.stdout);
    expect(objects.length).toBeGreaterThan(10);
    for (const object of objects) validateObject(object);
    const namespace = dir === 'base' ? 'uda' : 'uda-dev';
    expect([...new Set(objects.map((object) => object.metadata.namespace))]).toEqual([namespace]);
    // The api's RBAC must follow the namespace, or it cannot watch the runners.
    const binding = objects.find((object) => object.kind === 'RoleBinding')!;
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'uda-api', namespace }]);
  });

  it('drops the Prometheus Operator objects in the dev overlay only', () => {
    const kinds = (dir: string) => parseObjects(run(tools().kubectl, ['kustomize', join(repo, 'k8s', dir)]).stdout).map((object) => object.kind);
    expect(kinds('base')).toEqual(expect.arrayContaining(['ServiceMonitor', 'PrometheusRule']));
    expect(kinds('overlays/dev')).not.toContain('ServiceMonitor');
    expect(kinds('overlays/dev')).not.toContain('PrometheusRule');
  });
});
