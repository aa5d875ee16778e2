// The entry OpenCode 2 loads from a plugin folder (`<folder>/index.js`; it
// does not read package.json): the package folder, or a link to it under
// `.opencode/plugins/`, is the plugin.
export { default } from './dist/index.js';
