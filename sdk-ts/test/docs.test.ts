// The TypeScript on docs/sdk-typescript.md type-checks against the
// package as a user imports it ("ductor-sdk"), so the page cannot name a
// method or a field the SDK does not have.

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import ts from "typescript";

const sdk = new URL("../../", import.meta.url);

test("the page's TypeScript examples type-check", () => {
  const doc = readFileSync(new URL("../docs/sdk-typescript.md", sdk), "utf8");
  const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.ok(blocks.length >= 4, `only ${blocks.length} ts blocks`);
  const imports: string[] = [];
  const bodies = blocks.map((b, i) => {
    const lines = b.split("\n");
    imports.push(...lines.filter((l) => l.startsWith("import ")));
    return `export async function example${i}(): Promise<void> {\n${lines.filter((l) => !l.startsWith("import ")).join("\n")}\n}`;
  });
  const names = new Set(imports.flatMap((l) => /\{([^}]*)\}/.exec(l)![1]!.split(",").map((n) => n.trim())).filter(Boolean));
  names.add("Client");
  const source = [
    `import { ${[...names].join(", ")} } from "ductor-sdk";`,
    "declare const client: Client; declare const caseID: string; declare const paymentsURL: string;",
    ...bodies,
  ].join("\n");
  const dir = new URL("dist/docs-check/", sdk);
  mkdirSync(dir, { recursive: true });
  const file = fileURLToPath(new URL("examples.ts", dir));
  writeFileSync(file, source);
  const program = ts.createProgram([file], {
    strict: true, noEmit: true, skipLibCheck: true, types: ["node"], lib: ["lib.es2023.d.ts"],
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
  });
  const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  assert.deepStrictEqual(problems, [], source);
});
