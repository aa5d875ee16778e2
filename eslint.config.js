export { default } from '@heretek/config/eslint';
