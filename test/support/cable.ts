/**
 * A network cable between one server and one service, on loopback, for "pull the plug" tests (docs/ha.md): a TCP
 * relay that can be unplugged and plugged back.
 *
 * - Unplugged, not a byte goes through either way and nothing is closed: the peers see silence, as with a pulled
 *   cable or a dead switch port (no RST, no FIN). What the server writes meanwhile is held, with when it was written.
 *   A connection opened meanwhile is accepted but reaches nothing (its first bytes are held too).
 * - Plugged back, what was held goes through in order, a close included, as TCP retransmits once a link is back:
 *   the worst case for a server that wrote a request just before it lost its network.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Cable {
  /** host:port that the server connects to instead of the service's. */
  readonly address: string;
  /** When the server wrote, and how many bytes (whether plugged or not). */
  readonly written: { at: number; bytes: number }[];
  readonly plugged: boolean;
  unplug(): void;
  plug(): void;
  close(): Promise<void>;
}

interface CableState {
  plugged: boolean;
  readonly written: Cable['written'];
}

/** One relayed connection: the server's side and the service's side, with what waits for the cable in each direction. */
class Link {
  readonly #server: Socket;
  readonly #target: { host: string; port: number };
  #service: Socket | null = null;
  /** Bytes (or the end, as null) waiting to go to the service, and to the server. */
  readonly #toService: (Buffer | null)[] = [];
  readonly #toServer: (Buffer | null)[] = [];
  readonly #cable: CableState;

  constructor(server: Socket, target: { host: string; port: number }, cable: CableState) {
    this.#server = server;
    this.#target = target;
    this.#cable = cable;
    server.on('data', (chunk: Buffer) => {
      cable.written.push({ at: Date.now(), bytes: chunk.length });
      this.#toService.push(chunk);
      if (cable.plugged) this.flush();
    });
    server.on('end', () => {
      this.#toService.push(null);
      if (cable.plugged) this.flush();
    });
    server.on('error', () => undefined);
    if (cable.plugged) this.flush();
  }

  /** Lets through what waits, connecting to the service first if this link has not yet. */
  flush(): void {
    if (this.#service === null) {
      const service = connect(this.#target);
      this.#service = service;
      service.on('data', (chunk: Buffer) => {
        this.#toServer.push(chunk);
        this.#deliverToServer();
      });
      service.on('end', () => {
        this.#toServer.push(null);
        this.#deliverToServer();
      });
      service.on('error', () => this.#server.destroy());
      this.#server.on('close', () => service.destroy());
    }
    for (let item = this.#toService.shift(); item !== undefined; item = this.#toService.shift()) {
      if (item === null) this.#service.end();
      else this.#service.write(item);
    }
    this.#deliverToServer();
  }

  #deliverToServer(): void {
    if (!this.#cable.plugged) return;
    for (let item = this.#toServer.shift(); item !== undefined; item = this.#toServer.shift()) {
      if (item === null) this.#server.end();
      else this.#server.write(item);
    }
  }

  destroy(): void {
    this.#server.destroy();
    this.#service?.destroy();
  }
}

/** A cable to `host:port`, plugged in. */
export async function cable(target: { host: string; port: number }): Promise<Cable> {
  const state: CableState = { plugged: true, written: [] };
  const links: Link[] = [];
  const server: Server = createServer((socket) => links.push(new Link(socket, target, state)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    written: state.written,
    get plugged() {
      return state.plugged;
    },
    unplug() {
      state.plugged = false;
    },
    plug() {
      state.plugged = true;
      for (const link of links) link.flush();
    },
    close: () =>
      new Promise((resolve) => {
        for (const link of links) link.destroy();
        server.close(() => resolve());
      }),
  };
}
