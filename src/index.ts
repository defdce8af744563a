/**
 * The Worker entry point. Wrangler finds Durable Object classes only on the main module, hence the
 * re-exports next to the app.
 */
export { default } from "./app";
export { TrackerObject } from "../durable-objects/tracker-object";
export { DirectoryObject } from "../durable-objects/directory/directory-object";
