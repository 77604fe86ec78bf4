/**
 * The Kubernetes path of runner discovery, against a local fake of the API server that serves the
 * EndpointSlice list and watch responses, including a runner pod going away.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '@uda/shared/logger';
import { startFakeKubeApi, type FakeKubeApi } from '../../test/fakes/kube-api.ts';
import { KubernetesRunnerPool } from './k8s-pool.ts';

let api: FakeKubeApi;
let pool: KubernetesRunnerPool;

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(condition()).toBe(true);
}

beforeAll(async () => {
  api = await startFakeKubeApi();
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'fake', server: api.url, skipTLSVerify: true }],
    users: [{ name: 'api', token: 'service-account-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'api', namespace: 'uda' }],
    currentContext: 'fake',
  });
  pool = await KubernetesRunnerPool.start({
    kubeConfig,
    namespace: 'uda',
    serviceName: 'uda-query-runner',
    portName: 'http',
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
});

afterAll(async () => {
  await pool.close();
  await api.close();
});

describe('KubernetesRunnerPool', () => {
  it('lists the ready endpoints of the runner Service, on the named port', () => {
    expect(pool.ready()).toEqual(['http://10.244.1.17:8090', 'http://10.244.2.9:8090']);
    const list = api.requests.find((r) => !r.includes('watch=true'))!;
    expect(list).toContain('/apis/discovery.k8s.io/v1/namespaces/uda/endpointslices');
    expect(decodeURIComponent(list)).toContain('labelSelector=kubernetes.io/service-name=uda-query-runner');
  });

  it('follows the watch: a runner becoming ready, then a pod terminating and going away', async () => {
    await until(() => api.requests.some((r) => r.includes('watch=true')));
    api.nextEvent();
    await until(() => pool.ready().length === 3);
    api.nextEvent();
    await until(() => !pool.ready().includes('http://10.244.1.17:8090'));
    expect(pool.ready()).toEqual(['http://10.244.2.9:8090', 'http://10.244.3.4:8090']);
    api.nextEvent();
    await until(() => pool.ready().length === 2);
    expect(pool.ready()).toEqual(['http://10.244.2.9:8090', 'http://10.244.3.4:8090']);
  });
});
