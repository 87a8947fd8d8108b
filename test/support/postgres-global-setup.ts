/**
 * Global setup of the `postgres` Vitest project: initdb once for the whole run into a template folder (each test
 * file then starts a copy of it, test/support/postgres-file-setup.ts), removed when the run ends.
 */
import type { TestProject } from 'vitest/node';
import { createTemplate, removeTemplate } from './postgres-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgTemplate: string;
  }
}

export default function setup(project: TestProject): () => void {
  const template = createTemplate();
  project.provide('pgTemplate', template);
  return () => removeTemplate(template);
}
