declare namespace Cloudflare {
  interface Env {
    TRACKER: DurableObjectNamespace<import("../../durable-objects/tracker-object").TrackerObject>;
    DIRECTORY: DurableObjectNamespace<
      import("../../durable-objects/directory/directory-object").DirectoryObject
    >;
    REQUEST_EXPIRY_SECONDS: string;
    REPLICAS: string;
  }
}
