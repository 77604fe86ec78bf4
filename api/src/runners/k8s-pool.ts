/**
 * The ready runners from the Kubernetes API: an informer (list, then watch, re-listing after a
 * broken watch) on the EndpointSlices of the runner Service. Only endpoints whose `ready`
 * condition is true count, so a draining or starting runner gets no new queries.
 */
import type { KubeConfig} from '@kubernetes/client-node';
import { DiscoveryV1Api, makeInformer, type Informer, type ObjectCache, type V1EndpointSlice } from '@kubernetes/client-node';
import type { Logger } from '@uda/shared/logger';
import type { RunnerPool } from './pool.ts';

export interface KubernetesPoolOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  /** The runner Service's name; EndpointSlices carry it as `kubernetes.io/service-name`. */
  readonly serviceName: string;
  /** The named port of the runner's HTTP API in the slice. */
  readonly portName: string;
  readonly logger: Logger;
}

export function readyRunnerUrls(slices: readonly V1EndpointSlice[], portName: string): string[] {
  const urls: string[] = [];
  for (const slice of slices) {
    const port = slice.ports?.find((p) => p.name === portName)?.port;
    if (!port || slice.addressType === 'FQDN') continue;
    for (const endpoint of slice.endpoints ?? []) {
      // `ready` unset means ready (EndpointSlice API docs); `terminating` endpoints are never ready.
      if (endpoint.conditions?.ready === false || endpoint.conditions?.terminating === true) continue;
      const address = endpoint.addresses[0];
      if (address) urls.push(slice.addressType === 'IPv6' ? `http://[${address}]:${port}` : `http://${address}:${port}`);
    }
  }
  return [...new Set(urls)].sort();
}

export class KubernetesRunnerPool implements RunnerPool {
  private readonly informer: Informer<V1EndpointSlice> & ObjectCache<V1EndpointSlice>;
  private readonly portName: string;
  private urls: string[] = [];

  private constructor(options: KubernetesPoolOptions) {
    this.portName = options.portName;
    const api = options.kubeConfig.makeApiClient(DiscoveryV1Api);
    const labelSelector = `kubernetes.io/service-name=${options.serviceName}`;
    this.informer = makeInformer(
      options.kubeConfig,
      `/apis/discovery.k8s.io/v1/namespaces/${options.namespace}/endpointslices`,
      () => api.listNamespacedEndpointSlice({ namespace: options.namespace, labelSelector }),
      labelSelector,
    );
    const refresh = () => {
      this.urls = readyRunnerUrls(this.informer.list(), this.portName);
    };
    for (const event of ['add', 'update', 'delete'] as const) this.informer.on(event, refresh);
    this.informer.on('error', (error) => {
      options.logger.warn({ err: error }, 'EndpointSlice watch failed; restarting');
      setTimeout(() => void this.informer.start().catch(() => {}), 1000).unref();
    });
  }

  static async start(options: KubernetesPoolOptions): Promise<KubernetesRunnerPool> {
    const pool = new KubernetesRunnerPool(options);
    await pool.informer.start();
    pool.urls = readyRunnerUrls(pool.informer.list(), pool.portName);
    return pool;
  }

  ready(): readonly string[] {
    return this.urls;
  }

  async close(): Promise<void> {
    await this.informer.stop();
  }
}
