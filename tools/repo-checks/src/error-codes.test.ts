import { BrokerErrorCode } from '@heretek/broker';
import { CatalogErrorCode } from '@heretek/catalog';
import { GatewayErrorCode } from '@heretek/gateway-client';
import { HandoffErrorCode } from '@heretek/handoff';
import { PrefixErrorCode } from '@heretek/prefix';
import { SkillErrorCode } from '@heretek/skills';
import { describe, expect, it } from 'vitest';

// Every package declares its error codes one way, as the MCP SDK declares
// SdkErrorCode: a table from a PascalCase key to an UPPER_SNAKE_CASE value,
// the value being what `error.code` carries.
const TABLES: Record<string, Record<string, string>> = {
  '@heretek/broker': BrokerErrorCode,
  '@heretek/catalog': CatalogErrorCode,
  '@heretek/gateway-client': GatewayErrorCode,
  '@heretek/handoff': HandoffErrorCode,
  '@heretek/prefix': PrefixErrorCode,
  '@heretek/skills': SkillErrorCode,
};

describe('error codes', () => {
  it.each(Object.entries(TABLES))(
    '%s spells each code as a PascalCase key and an UPPER_SNAKE_CASE value',
    (_name, table) => {
      const entries = Object.entries(table);
      expect(entries.length).toBeGreaterThan(0);
      for (const [key, value] of entries) {
        expect(key).toMatch(/^[A-Z][A-Za-z0-9]*$/);
        expect(value).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      }
      expect(new Set(Object.values(table)).size).toBe(entries.length);
    },
  );
});
