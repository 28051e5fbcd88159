/**
 * The release: every package from one version, deno.json's (package.json's must agree) — the JSR
 * package, the npm package and its platform package(s) (tools/package.ts) — built into
 * `.tmp/release/<version>/`, then dry-run: `deno publish --dry-run` of the JSR stage (in
 * {@link buildJsr}) and `npm publish --dry-run` of each npm tarball, the files each would publish
 * listed. `--publish` then publishes them for real: the platform packages first (the package pins
 * them), then the package, then JSR (`deno publish` of the same stage; pass its flags after
 * `--publish`). To release a new version, change deno.json's and package.json's `version`.
 *
 * `bun tools/release.ts [--publish [deno publish flags…]]`
 *
 * @module
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildPackages, denoEnv, denoJson, dryRunNpm, publishToJsr, ROOT, run } from "./package.ts";

/** The one version every package gets: deno.json's; package.json's must say the same. */
export function releaseVersion(): string {
  const version = denoJson().version;
  const npmVersion = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version?: string }).version;
  if (npmVersion !== version) throw new Error(`deno.json says version ${version}, package.json ${npmVersion}: make them one`);
  return version;
}

if ((import.meta as { main?: boolean }).main) {
  const publish = process.argv[2] === "--publish";
  const version = releaseVersion();
  const out = join(ROOT, ".tmp", "release", version);
  rmSync(out, { recursive: true, force: true });
  const { jsr, npm, platforms } = await buildPackages(out);
  console.log(`version ${version} (deno.json), packages in ${out}`);
  console.log(`jsr  ${denoJson().name}@${version}: deno publish --dry-run lists ${jsr.dryRun.length} files`);
  const tarballs = [...platforms, npm]; // the platform packages first: the package pins them
  for (const t of tarballs) {
    const dry = await dryRunNpm(t.tarball);
    console.log(`npm  ${dry.id}: npm publish --dry-run lists ${dry.files.length} files (${t.tarball})`);
  }
  if (publish) {
    for (const t of tarballs) {
      const r = await run("npm", ["publish", "--access", "public", t.tarball], { env: denoEnv() });
      process.stdout.write(r.stdout + r.stderr);
      if (r.code !== 0) process.exit(r.code ?? 1);
    }
    process.exit(await publishToJsr(process.argv.slice(3)));
  }
  console.log("dry runs only: bun tools/release.ts --publish publishes them");
}
