/**
 * Offline checks of charts/uda: helm lint, helm template for the
 * default and the production-like values, every object against its Kubernetes schema, and the
 * deployment rules the chart promises (limits, probes, non-root, no `latest`, no secret values,
 * admin port never exposed, runner reachable only from api pods, minimal RBAC).
 */
import { describe, it, expect, beforeAll } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, parse, parseDocument } from 'yaml';
import type { Pair, YAMLMap } from 'yaml';
import { chartDir, helmTemplate, parseObjects, productionValues, run, tools, validateObject } from '@uda/test-support/k8s';
import type { K8sObject } from '@uda/test-support/k8s';

interface Container {
  name: string;
  image: string;
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: unknown;
  livenessProbe?: unknown;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  securityContext?: { runAsNonRoot?: boolean; readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
}
interface PodSpec {
  containers: Container[];
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean };
}
interface Workload {
  object: K8sObject;
  labels: Record<string, string>;
  pod: PodSpec;
}

type Spec = Record<string, unknown>;
const spec = (object: K8sObject) => object.spec as Spec;

/** Pod templates of Deployments, Jobs and CronJobs. */
function workloads(objects: K8sObject[]): Workload[] {
  const out: Workload[] = [];
  for (const object of objects) {
    const template =
      object.kind === 'CronJob'
        ? (spec(object).jobTemplate as { spec: { template: unknown } }).spec.template
        : object.kind === 'Deployment' || object.kind === 'Job'
          ? spec(object).template
          : undefined;
    if (!template) continue;
    const { metadata, spec: pod } = template as { metadata: { labels: Record<string, string> }; spec: PodSpec };
    out.push({ object, labels: metadata.labels, pod });
  }
  return out;
}

const byName = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} rendered`);
  return found;
};

const mebibytes = (quantity: string) => {
  const match = /^(\d+)(Mi|Gi|MiB|GiB)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2]!.startsWith('G') ? 1024 : 1);
};

const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

const secretEnvNames = [
  'DATABASE_URL',
  'REDIS_URL',
  'KEY_PEPPER',
  'KEY_ENCRYPTION_KEY',
  'ADMIN_TOKEN',
  'OPENALEX_API_KEY',
  'SMTP_URL',
  'S3_ACCESS_KEY_ID',
  'S3_SECRET_ACCESS_KEY',
  'RUNNER_TOKEN',
  'QUERY_RUNNER_TOKEN',
];

describe.each([
  { name: 'default values', args: [] as string[] },
  { name: 'production-like values', args: ['-f', productionValues] },
])('chart with $name', ({ args }) => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = parseObjects(helmTemplate(args));
  });

  it('passes helm lint --strict', () => {
    const lint = run(tools().helm, ['lint', '--strict', chartDir, ...args]);
    expect(lint.stderr + lint.stdout).toContain('0 chart(s) failed');
    expect(lint.status).toBe(0);
  });

  it('renders every object the issue asks for', () => {
    const kinds = new Set(objects.map((object) => object.kind));
    for (const kind of [
      'Deployment', 'CronJob', 'Job', 'Service', 'Ingress', 'HorizontalPodAutoscaler', 'PodDisruptionBudget',
      'NetworkPolicy', 'ServiceAccount', 'Role', 'RoleBinding', 'ConfigMap', 'ServiceMonitor', 'PrometheusRule',
    ]) {
      expect(kinds).toContain(kind);
    }
  });

  it('validates every object against its Kubernetes schema', () => {
    const failures: string[] = [];
    for (const object of objects) {
      try {
        validateObject(object);
      } catch (error) {
        failures.push(`${object.kind}/${object.metadata.name}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('renders no Secret but the runner token, and credentials only come from secretKeyRef', () => {
    expect(objects.filter((object) => object.kind === 'Secret').map((object) => object.metadata.name)).toEqual(['uda-runner-token']);
    for (const { pod } of workloads(objects)) {
      for (const container of pod.containers) {
        for (const env of container.env ?? []) {
          if (secretEnvNames.includes(env.name)) {
            expect({ name: env.name, value: env.value, ref: Boolean(env.valueFrom?.secretKeyRef) }).toEqual({
              name: env.name,
              value: undefined,
              ref: true,
            });
          }
        }
      }
    }
    for (const configMap of objects.filter((object) => object.kind === 'ConfigMap')) {
      const keys = Object.keys((configMap.data as Record<string, string>) ?? {});
      expect(keys.filter((key) => secretEnvNames.includes(key))).toEqual([]);
    }
  });

  it('gives every container limits, a non-root read-only filesystem and a pinned image', () => {
    for (const { object, pod } of workloads(objects)) {
      for (const container of pod.containers) {
        const where = `${object.kind}/${object.metadata.name}/${container.name}`;
        expect({ where, cpu: container.resources?.limits?.cpu !== undefined, memory: container.resources?.limits?.memory !== undefined }).toEqual({ where, cpu: true, memory: true });
        expect({ where, requests: container.resources?.requests?.memory !== undefined }).toEqual({ where, requests: true });
        const nonRoot = container.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
        expect({ where, nonRoot, readOnly: container.securityContext?.readOnlyRootFilesystem, escalation: container.securityContext?.allowPrivilegeEscalation }).toEqual({
          where,
          nonRoot: true,
          readOnly: true,
          escalation: false,
        });
        expect(container.image).toMatch(/^[^:@]+(:[A-Za-z0-9_][A-Za-z0-9_.-]*)$/);
        expect(container.image.endsWith(':latest')).toBe(false);
      }
    }
  });

  it('probes every long-running container and matches the grace period to the drain', () => {
    const deployments = workloads(objects).filter(({ object }) => object.kind === 'Deployment');
    expect(deployments.map(({ object }) => object.metadata.name).sort()).toEqual(['uda-api', 'uda-query-runner', 'uda-sheets-worker']);
    // The sheets worker serves nothing: no HTTP probes, no Service; its lease covers a crash.
    const served = deployments.filter(({ object }) => object.metadata.name !== 'uda-sheets-worker');
    for (const { object, pod } of served) {
      const container = pod.containers[0]!;
      expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/readyz' } });
      expect(container.livenessProbe).toMatchObject({ httpGet: { path: '/healthz' } });
      const preStop = Number(container.lifecycle?.preStop?.exec?.command[1]);
      const config = byName(objects, 'ConfigMap', object.metadata.name).data as Record<string, string>;
      const drain = Number(config.SHUTDOWN_GRACE_MS) / 1000;
      expect(preStop).toBeGreaterThan(0);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + drain);
    }
  });

  it('sizes the runner memory limit above DuckDB memory_limit and lets running queries finish', () => {
    const runner = workloads(objects).find(({ object }) => object.metadata.name === 'uda-query-runner')!;
    const container = runner.pod.containers[0]!;
    const config = byName(objects, 'ConfigMap', 'uda-query-runner').data as Record<string, string>;
    const duckdb = mebibytes(config.DUCKDB_MEMORY_LIMIT!);
    const limit = mebibytes(container.resources!.limits!.memory!);
    expect(limit - duckdb).toBeGreaterThanOrEqual(256);
    expect(container.resources!.requests!.memory).toBe(container.resources!.limits!.memory);
    expect(Number(config.SHUTDOWN_GRACE_MS)).toBeGreaterThanOrEqual(Number(config.QUERY_TIMEOUT_MS));
    const volumes = (runner.object.spec as { template: { spec: { volumes: { name: string; emptyDir?: unknown }[] } } }).template.spec.volumes;
    expect(volumes.find((volume) => volume.name === 'data')?.emptyDir).toBeDefined();
    expect(config.DATA_DIR).toBe('/data');
  });

  it('never exposes the admin port through a container port, Service or Ingress', () => {
    const api = byName(objects, 'ConfigMap', 'uda-api').data as Record<string, string>;
    const admin = Number(api.ADMIN_PORT);
    expect(api.ADMIN_HOST).toBe('127.0.0.1');
    for (const { pod } of workloads(objects)) {
      for (const container of pod.containers) {
        for (const port of container.ports ?? []) {
          expect(port.containerPort).not.toBe(admin);
          expect(port.name).not.toMatch(/admin/);
        }
      }
    }
    for (const service of objects.filter((object) => object.kind === 'Service')) {
      for (const port of (spec(service).ports as { port: number; targetPort: number | string; name: string }[])) {
        expect([port.port, port.targetPort, port.name]).not.toContain(admin);
        expect(String(port.targetPort)).not.toMatch(/admin/);
        expect(['http', 'metrics']).toContain(port.targetPort);
      }
    }
    for (const ingress of objects.filter((object) => object.kind === 'Ingress')) {
      const backends = JSON.stringify(spec(ingress).rules);
      expect(backends).not.toContain('admin');
      expect(backends).not.toContain(String(admin));
      expect(backends).not.toContain('metrics');
    }
  });

  it('gives the api and the query-runner one random runner token from the Secret the chart creates', () => {
    const secret = byName(objects, 'Secret', 'uda-runner-token') as K8sObject & { data: Record<string, string> };
    expect(Buffer.from(secret.data.token!, 'base64').toString('utf8')).toMatch(/^[A-Za-z0-9]{48}$/);
    const tokenEnv = (workload: string, name: string) => {
      const pod = workloads(objects).find(({ object }) => object.metadata.name === workload)!.pod;
      return pod.containers[0]!.env?.find((env) => env.name === name)?.valueFrom?.secretKeyRef;
    };
    expect(tokenEnv('uda-api', 'QUERY_RUNNER_TOKEN')).toEqual({ name: 'uda-runner-token', key: 'token' });
    expect(tokenEnv('uda-query-runner', 'RUNNER_TOKEN')).toEqual({ name: 'uda-runner-token', key: 'token' });
  });

  it('lets only api pods reach the query-runner API port', () => {
    const runnerLabels = workloads(objects).find(({ object }) => object.metadata.name === 'uda-query-runner')!.labels;
    const apiLabels = workloads(objects).find(({ object }) => object.metadata.name === 'uda-api')!.labels;
    const policies = objects.filter(
      (object) => object.kind === 'NetworkPolicy' && matches((spec(object).podSelector as { matchLabels?: Record<string, string> }).matchLabels ?? {}, runnerLabels),
    );
    expect(policies.length).toBeGreaterThan(0);
    type Rule = { from?: { podSelector?: { matchLabels: Record<string, string> }; namespaceSelector?: unknown; ipBlock?: unknown }[]; ports?: { port: string | number }[] };
    for (const policy of policies) {
      expect(spec(policy).policyTypes).toContain('Ingress');
      for (const rule of (spec(policy).ingress as Rule[]) ?? []) {
        // A rule without ports or without sources would open every port or every source.
        expect(rule.ports?.length).toBeGreaterThan(0);
        expect(rule.from?.length).toBeGreaterThan(0);
        const opensApi = rule.ports!.some((port) => port.port === 'http' || port.port === 8090);
        if (!opensApi) {
          expect(rule.ports!.map((port) => port.port)).toEqual(['metrics']);
          continue;
        }
        for (const peer of rule.from!) {
          expect(peer.namespaceSelector).toBeUndefined();
          expect(peer.ipBlock).toBeUndefined();
          expect(matches(peer.podSelector!.matchLabels, apiLabels)).toBe(true);
          expect(matches(peer.podSelector!.matchLabels, runnerLabels)).toBe(false);
        }
      }
    }
  });

  it('grants only list and watch on EndpointSlices, to the api only', () => {
    expect(objects.filter((object) => object.kind === 'ClusterRole' || object.kind === 'ClusterRoleBinding')).toEqual([]);
    const roles = objects.filter((object) => object.kind === 'Role');
    expect(roles).toHaveLength(1);
    expect(roles[0]!.rules).toEqual([{ apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] }]);
    const binding = objects.find((object) => object.kind === 'RoleBinding')!;
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'uda-api', namespace: 'uda' }]);
    for (const { object, pod } of workloads(objects)) {
      if (object.metadata.name === 'uda-api') expect(pod.serviceAccountName).toBe('uda-api');
      else expect({ name: object.metadata.name, automount: pod.automountServiceAccountToken, sa: pod.serviceAccountName === 'uda-api' }).toEqual({ name: object.metadata.name, automount: false, sa: false });
    }
    // The runner Service's labels are what the api selects EndpointSlices by.
    expect(byName(objects, 'Service', 'uda-query-runner').metadata.labels).toMatchObject({ 'app.kubernetes.io/component': 'query-runner' });
  });

  it('runs the exporter as a bounded, non-overlapping CronJob and migrations as a hook', () => {
    const cron = spec(byName(objects, 'CronJob', 'uda-exporter'));
    expect(cron).toMatchObject({ concurrencyPolicy: 'Forbid' });
    expect(cron.startingDeadlineSeconds).toBeGreaterThan(0);
    expect(cron.successfulJobsHistoryLimit).toBeGreaterThanOrEqual(1);
    expect(cron.failedJobsHistoryLimit).toBeGreaterThanOrEqual(1);
    expect((cron.jobTemplate as { spec: { activeDeadlineSeconds: number } }).spec.activeDeadlineSeconds).toBeGreaterThan(0);
    const migrate = byName(objects, 'Job', 'uda-migrate');
    expect(migrate.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    const container = (spec(migrate).template as { spec: PodSpec }).spec.containers[0]!;
    expect(container.env?.map((env) => env.name)).toContain('DATABASE_URL');
  });

  it('ships the dashboard ConfigMap for the Grafana sidecar', () => {
    const dashboard = byName(objects, 'ConfigMap', 'uda-dashboard');
    expect(dashboard.metadata.labels?.grafana_dashboard).toBe('1');
    expect(() => JSON.parse((dashboard.data as Record<string, string>)['uda.json']!)).not.toThrow();
  });
});

describe('runner token from an existing Secret', () => {
  it('renders no Secret and gives both workloads the named Secret and key (as the plain manifests do)', () => {
    const objects = parseObjects(helmTemplate(['--set', 'runnerToken.existingSecret=uda-secrets', '--set', 'runnerToken.key=runner-token']));
    expect(objects.filter((object) => object.kind === 'Secret')).toEqual([]);
    const refs = workloads(objects)
      .flatMap(({ pod }) => pod.containers.flatMap((c) => c.env ?? []))
      .filter((env) => env.name === 'RUNNER_TOKEN' || env.name === 'QUERY_RUNNER_TOKEN')
      .map((env) => env.valueFrom?.secretKeyRef);
    expect(refs).toEqual([{ name: 'uda-secrets', key: 'runner-token' }, { name: 'uda-secrets', key: 'runner-token' }]);
  });
});

describe('values files', () => {
  // Shapes of credentials that must never sit in a values file.
  const credentialShapes = [
    /:\/\/[^/\s:@]+:[^/\s@]+@/, // user:password@ in a URL
    /^[0-9a-fA-F]{32,}$/, // hex keys and peppers
    /^(service_|dk_)[A-Za-z0-9]{20,}/, // API keys (DECISIONS §5)
    /^AKIA[0-9A-Z]{16}$/, // AWS access key ids
    /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
    /^[A-Za-z0-9+/]{40,}={0,2}$/, // long base64 secrets
  ];
  const leaves = (value: unknown, path = ''): [string, unknown][] =>
    value && typeof value === 'object'
      ? Object.entries(value).flatMap(([key, child]) => leaves(child, path ? `${path}.${key}` : key))
      : [[path, value]];

  it.each(['values.yaml', 'values-production.yaml'])('%s holds no credential values', (file) => {
    const values = parse(readFileSync(join(chartDir, file), 'utf8')) as Record<string, unknown>;
    const found = leaves(values).filter(([, value]) => typeof value === 'string' && credentialShapes.some((shape) => shape.test(value)));
    expect(found).toEqual([]);
    // Secret references are key names, nothing else.
    for (const [path, value] of leaves((values.secrets as Record<string, unknown>) ?? {})) {
      expect({ path, value }).toEqual({ path, value: expect.stringMatching(/^[-._a-zA-Z0-9]{1,253}$/) });
    }
  });

  it('the credential check itself catches a credential', () => {
    const leaked = ['postgres://uda:hunter2@db:5432/uda', 'a'.repeat(64), `service_${'x'.repeat(40)}`];
    expect(leaked.filter((value) => credentialShapes.some((shape) => shape.test(value)))).toEqual(leaked);
  });
});

describe('values.yaml', () => {
  // Maps whose keys are the user's own (labels, env names, resource names): documented as a whole.
  const freeForm = new Set([
    'resources', 'extraConfig', 'annotations', 'labels', 'podLabels', 'podAnnotations', 'nodeSelector',
    'metricsNamespaceSelector', 'ingressNamespaceSelector', 'tolerations', 'pullSecrets',
  ]);
  const document = parseDocument(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));

  /** Paths of the values, each with whether a comment sits right above it. */
  function documented(map: YAMLMap, path: string[] = []): { path: string; commented: boolean; leaf: boolean }[] {
    return map.items.flatMap((item, index) => {
      const pair = item as Pair<{ value: unknown; commentBefore?: string | null }, unknown>;
      const key = String(pair.key.value);
      const here = [...path, key];
      // yaml attaches the comment above a map's first key to the map itself.
      const commented = Boolean(pair.key.commentBefore) || (index === 0 && Boolean(map.commentBefore));
      if (isMap(pair.value) && !freeForm.has(key) && pair.value.items.length > 0) {
        return [{ path: here.join('.'), commented, leaf: false }, ...documented(pair.value, here)];
      }
      return [{ path: here.join('.'), commented, leaf: true }];
    });
  }

  it('documents every value with a comment', () => {
    const undocumented = documented(document.contents as YAMLMap).filter((entry) => entry.leaf && !entry.commented);
    expect(undocumented.map((entry) => entry.path)).toEqual([]);
  });

  it('has exactly the keys values.schema.json declares', () => {
    type Schema = { properties?: Record<string, Schema>; $ref?: string };
    const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as Schema & { $defs: Record<string, Schema> };
    const resolve = (node: Schema): Schema => (node.$ref ? schema.$defs[node.$ref.replace('#/$defs/', '')]! : node);
    const schemaPaths = (node: Schema, path: string[] = []): string[] =>
      Object.entries(resolve(node).properties ?? {}).flatMap(([key, child]) => {
        const here = [...path, key];
        const nested = freeForm.has(key) ? [] : schemaPaths(child, here);
        return [here.join('.'), ...nested];
      });
    const valuePaths = documented(document.contents as YAMLMap).map((entry) => entry.path);
    // `global` is Helm's, for subcharts; it is allowed but never set here.
    expect(valuePaths.sort()).toEqual(schemaPaths(schema).filter((path) => path !== 'global').sort());
  });
});

describe('values.schema.json', () => {
  it.each([
    { why: 'a `latest` image tag', set: 'image.tag=latest', path: '/image/tag' },
    { why: 'a `latest` per-image tag', set: 'api.image.tag=latest', path: '/api/image/tag' },
    { why: 'a privileged port', set: 'api.ports.http=80', path: '/api/ports/http' },
    { why: 'an unknown key (typo)', set: 'api.replicas=3', path: '/api' },
    { why: 'a hand-set runner memory limit', set: 'queryRunner.resources.limits.memory=4Gi', path: '/queryRunner/resources/limits' },
    { why: 'an unknown log level', set: 'common.logLevel=verbose', path: '/common/logLevel' },
    { why: 'a credential instead of a Secret key name', set: 'secrets.keys.databaseUrl=postgres://u:p@db/uda', path: '/secrets/keys/databaseUrl' },
    { why: 'a DuckDB limit below 256 MiB', set: 'queryRunner.duckdb.memoryLimitMiB=64', path: '/queryRunner/duckdb/memoryLimitMiB' },
    { why: 'an unknown probe port', set: 'api.probePort=admin', path: '/api/probePort' },
  ])('rejects $why', ({ set, path }) => {
    const result = run(tools().helm, ['template', 'uda', chartDir, '--set', set]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(path);
  });

  it.each([
    { why: 'minReplicas above maxReplicas', sets: ['api.autoscaling.minReplicas=20', 'api.autoscaling.maxReplicas=3'], message: 'exceeds maxReplicas' },
    { why: 'a drain shorter than the query timeout', sets: ['queryRunner.shutdown.drainSeconds=5'], message: 'must cover' },
    { why: 'the admin port on the http port', sets: ['api.ports.admin=8080'], message: 'never exposed' },
  ])('fails the render on $why', ({ sets, message }) => {
    const result = run(tools().helm, ['template', 'uda', chartDir, ...sets.flatMap((set) => ['--set', set])]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(message);
  });

  it('accepts the defaults with no --set at all', () => {
    expect(run(tools().helm, ['template', 'uda', chartDir]).status).toBe(0);
  });
});
