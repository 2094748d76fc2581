/* @ts-self-types="./schema.d.ts" */
export {};
