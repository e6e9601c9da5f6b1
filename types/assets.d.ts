// Files imported `with { type: "file" }` resolve to a path (on disk, or /$bunfs inside the binary).
declare module "*.so" {
  const path: string;
  export default path;
}
declare module "*.so.1" {
  const path: string;
  export default path;
}
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.html" {
  const path: string;
  export default path;
}
declare module "*.js" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "*.svg" {
  const path: string;
  export default path;
}
