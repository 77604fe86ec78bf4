/**
 * Closing a server drains its keep-alive connections: a request that arrives on one while the
 * server closes is answered, with `Connection: close`, instead of finding its connection reset.
 */
import { Agent, get } from 'node:http';
import express from 'express';
import { listen } from './server.ts';

function getOn(url: string, agent: Agent): Promise<{ status: number | undefined; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    }).on('error', reject);
  });
}

describe('listen().close()', () => {
  it('answers a request sent on a kept-alive connection while the server closes, telling the client to close it', async () => {
    const app = express();
    app.get('/ping', (_req, res) => void res.send('pong'));
    const listening = await listen(app, 0, '127.0.0.1');
    // One socket, kept alive between requests, as a load balancer's or a client's pool keeps it.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await getOn(`${listening.url}/ping`, agent)).toEqual({ status: 200, connection: 'keep-alive' });
      const closing = listening.close();
      expect(await getOn(`${listening.url}/ping`, agent)).toEqual({ status: 200, connection: 'close' });
      await closing;
    } finally {
      agent.destroy();
    }
  });
});
