/**
 * A local stand-in for the Kubernetes API server, serving the EndpointSlice list and watch
 * responses in the API's wire format (`api/test/fixtures/k8s`): a list with a resourceVersion, then
 * a watch stream of newline-delimited `{type, object}` events that the test releases one by one.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'k8s');

export interface FakeKubeApi {
  readonly url: string;
  readonly requests: string[];
  /** Sends the next recorded watch event to every open watch. */
  nextEvent(): void;
  /** Ends open watch streams, as the API server does when a watch times out. */
  dropWatches(): void;
  close(): Promise<void>;
}

export async function startFakeKubeApi(): Promise<FakeKubeApi> {
  const list = await readFile(join(FIXTURES, 'endpointslice-list.json'), 'utf8');
  const events = (await readFile(join(FIXTURES, 'endpointslice-watch.ndjson'), 'utf8')).trim().split('\n');
  const requests: string[] = [];
  const watches = new Set<ServerResponse>();
  let sent = 0;

  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://fake');
    if (!url.pathname.endsWith('/endpointslices')) return void res.writeHead(404).end();
    if (url.searchParams.get('watch') !== 'true') {
      return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(list);
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // The API server answers a watch's headers at once; Node would hold them until the first event.
    res.flushHeaders();
    // A re-established watch replays what this fake has already released since the list.
    for (const event of events.slice(0, sent)) res.write(`${event}\n`);
    watches.add(res);
    res.on('close', () => watches.delete(res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    nextEvent() {
      const event = events[sent++];
      if (event === undefined) throw new Error('no more recorded watch events');
      for (const res of watches) res.write(`${event}\n`);
    },
    dropWatches() {
      for (const res of watches) res.end();
    },
    async close() {
      for (const res of watches) res.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
}
