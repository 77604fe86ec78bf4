/**
 * Helpers for the offline Kubernetes checks: the tools (helm, kubectl, promtool via
 * scripts/k8s/tools.sh), rendering the chart into plain objects, schema validation with
 * kubernetes-models, and the metrics contract of docs/deploy.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';

export const repo = resolve(import.meta.dirname, '..', '..');
export const chartDir = join(repo, 'charts', 'uda');
export const productionValues = join(chartDir, 'values-production.yaml');

let bin: string | undefined;
/** helm, kubectl and promtool live here; tools.sh is idempotent and fast once cached. */
export function tools(): { helm: string; kubectl: string; promtool: string } {
  bin ??= execFileSync(join(repo, 'scripts', 'k8s', 'tools.sh'), { encoding: 'utf8' }).trim();
  return { helm: join(bin, 'helm'), kubectl: join(bin, 'kubectl'), promtool: join(bin, 'promtool') };
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[]): Run {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, cwd: repo });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `helm template` with extra args; throws with helm's message when it fails. */
export function helmTemplate(args: string[] = []): string {
  const result = run(tools().helm, ['template', 'uda', chartDir, '--namespace', 'uda', ...args]);
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return result.stdout;
}

// A loose shape of the objects the checks read; the schemas themselves are kubernetes-models'.
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null && typeof object === 'object');
}

type Model = new (data: never) => { validate(): void };
const models: Record<string, Model> = {};
for (const model of [
  ConfigMap,
  Secret,
  CronJob,
  Deployment,
  HorizontalPodAutoscaler,
  Ingress,
  Job,
  NetworkPolicy,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Service,
  ServiceAccount,
  PrometheusRule,
  ServiceMonitor,
] as unknown as (Model & { apiVersion: string; kind: string })[]) {
  models[`${model.apiVersion}/${model.kind}`] = model;
}

/** Validates one object against its Kubernetes (or Prometheus Operator CRD) schema; throws on error. */
export function validateObject(object: K8sObject): void {
  const Model = models[`${object.apiVersion}/${object.kind}`];
  if (!Model) throw new Error(`no schema model for ${object.apiVersion}/${object.kind}: add it to test-support/src/k8s.ts`);
  new Model(object as never).validate();
}

/** Metric names of the "Metrics contract" section of docs/deploy.md (every `name` in its table). */
export function metricsContract(): Set<string> {
  const doc = readFileSync(join(repo, 'docs', 'deploy.md'), 'utf8');
  const section = doc.split(/^## /m).find((part) => part.startsWith('Metrics contract'));
  if (!section) throw new Error('docs/deploy.md has no "## Metrics contract" section');
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    const cell = /^\|\s*`([a-z_:][a-z0-9_:]*)/.exec(line);
    if (cell?.[1]) names.add(cell[1]);
  }
  return names;
}

const promqlWords = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'group', 'count_values',
  'rate', 'irate', 'increase', 'delta', 'idelta', 'deriv', 'predict_linear', 'histogram_quantile', 'time', 'absent',
  'absent_over_time', 'clamp_min', 'clamp_max', 'abs', 'ceil', 'floor', 'round', 'vector', 'scalar', 'label_replace',
  'label_join', 'max_over_time', 'min_over_time', 'avg_over_time', 'sum_over_time', 'count_over_time', 'changes',
  'resets', 'timestamp', 'sort', 'sort_desc', 'label_values', 'by', 'without', 'on', 'ignoring', 'group_left',
  'group_right', 'and', 'or', 'unless', 'offset', 'bool', 'inf', 'nan',
]);

/** The metric names an expression reads: identifiers outside label matchers, ranges and groupings. */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+\w+/g, ' ');
  const names = stripped.match(/(?<![\w$.])[a-zA-Z_:][a-zA-Z0-9_:]*(?![\w(])/g) ?? [];
  return [...new Set(names.filter((name) => !promqlWords.has(name.toLowerCase())))];
}

/** Whether a series name is covered by the contract (histograms also export _bucket/_count/_sum). */
export function inContract(contract: Set<string>, name: string): boolean {
  if (contract.has(name)) return true;
  const base = name.replace(/_(bucket|count|sum)$/, '');
  return base !== name && contract.has(base);
}
