import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between the app and a real server (Postgres) that a test can break:
 *
 * - `cut()`: every open connection is destroyed and the port stops listening, so new
 *   connections are refused (the database host is down).
 * - `blackhole()`: the port accepts connections and never forwards a byte (a host that
 *   answers TCP but not the protocol: connect_timeout must fire).
 * - `restore()`: listens again on the same port and forwards new connections as before.
 *
 * Loopback only; every socket it opens is tracked and destroyed by `close()`.
 */
export interface TcpProxy {
  port: number;
  /** Connections accepted since start (any mode). */
  accepted: number;
  cut(): Promise<void>;
  blackhole(): Promise<void>;
  /** Open connections stay open but nothing passes any more, either way (a hung peer). */
  freeze(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: 'forward' | 'blackhole' = 'forward';
  let frozen = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const server: Server = createServer((client) => {
    proxy.accepted++;
    track(client);
    if (mode === 'blackhole') return; // accepted, never answered
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.on('data', (chunk) => frozen || upstream.write(chunk));
    upstream.on('data', (chunk) => frozen || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  const destroyAll = () => {
    for (const socket of sockets) socket.destroy();
  };

  // Lets the client see its sockets close before the test sends the next request.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  await listen(0);
  const port = (server.address() as AddressInfo).port;

  const proxy: TcpProxy = {
    port,
    accepted: 0,
    async cut() {
      const closed = stopListening();
      destroyAll();
      await closed;
      await settle();
    },
    async blackhole() {
      mode = 'blackhole';
      destroyAll();
      if (!server.listening) await listen(port);
      await settle();
    },
    freeze() {
      frozen = true;
    },
    async restore() {
      // Connections accepted while black-holed stay silent until their client gives up.
      mode = 'forward';
      frozen = false;
      if (!server.listening) await listen(port);
    },
    async close() {
      const closed = stopListening();
      destroyAll();
      await closed;
    },
  };
  return proxy;
}
