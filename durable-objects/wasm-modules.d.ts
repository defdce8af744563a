/** A `.wasm` file imported as a module: compiled when the Worker is uploaded, so it is a `Module` here. */
declare module "*.wasm" {
  const compiled: WebAssembly.Module;
  export default compiled;
}
