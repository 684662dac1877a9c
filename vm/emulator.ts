// The part of a v86 emulator the machine and its devices use (the network link, the traffic
// counter, the fake guest in tests): its bus, its events, its serial ports, save and restore.

/** The part of a V86 instance used here (the published typings miss the bus and some events). */
export interface EmulatorLike {
  add_listener(event: string, listener: (value: never) => void): void;
  remove_listener(event: string, listener: (value: never) => void): void;
  bus: { send(event: string, value: unknown): void };
  save_state(): Promise<ArrayBuffer>;
  stop(): Promise<void>;
  run(): Promise<void>;
  destroy(): Promise<void>;
  serial0_send(data: string): void;
  serial_send_bytes(port: number, data: Uint8Array): void;
  /** What is behind the network card (v86's Wisp adapter, when it was given a relay). */
  network_adapter?: unknown;
}
