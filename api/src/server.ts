import type { Server } from 'node:http';
import type { Express } from 'express';

export interface Listening {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Listens and resolves with the URL actually bound (port 0 picks one). */
export function listen(app: Express, port: number, host: string): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      const address = server.address();
      const boundPort = typeof address === 'object' && address ? address.port : port;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve({
        server,
        url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${boundPort}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}
