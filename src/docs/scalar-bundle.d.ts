// The Scalar browser bundle, imported as text (`with { type: "text" }`) by src/docs/bundle.ts
// so that Bun, Deno and the compiled binary all carry it (docs/api.md §16).
declare module "*/@scalar/api-reference/dist/browser/standalone.js" {
  const text: string;
  export default text;
}
