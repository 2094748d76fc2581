/** The console's own hosts (docs/security.md §5): what a Host header is, and which ones the console serves. */
import { describe, expect, test } from "bun:test";
import { isConsoleHost, parseAdminHosts, splitHost } from "../../src/admin/hosts.ts";

describe("splitHost reads a Host header", () => {
  test.each([
    ["localhost:8080", { name: "localhost", port: 8080 }],
    ["LOCALHOST:8080", { name: "localhost", port: 8080 }],
    ["localhost.:8080", { name: "localhost", port: 8080 }],
    ["127.0.0.1", { name: "127.0.0.1", port: null }],
    ["[::1]:8080", { name: "::1", port: 8080 }],
    ["crm.example.com", { name: "crm.example.com", port: null }],
  ])("%s", (text, expected) => expect(splitHost(text)).toEqual(expected));

  test.each(["", "evil.com@localhost:8080", "localhost:8080:80", "localhost:99999", "::1:8080", "[zz]:80", "a b", "local_host", "localhost/x", "-a.com"])(
    "%p is no host",
    (text) => expect(splitHost(text)).toBeNull(),
  );
});

describe("isConsoleHost", () => {
  test("loopback names and addresses on the listening port are served", () => {
    for (const host of ["localhost:8080", "127.0.0.1:8080", "127.0.0.2:8080", "[::1]:8080", "[::ffff:127.0.0.1]:8080"]) {
      expect(isConsoleHost(host, 8080, [])).toBe(true);
    }
  });

  test("loopback on another port, or without a port when not listening on 80, is refused", () => {
    expect(isConsoleHost("localhost:8081", 8080, [])).toBe(false);
    expect(isConsoleHost("localhost", 8080, [])).toBe(false);
    expect(isConsoleHost("localhost", 80, [])).toBe(true);
  });

  test("any other name or address is refused: a rebinding page's own name, a LAN address, a missing Host", () => {
    for (const host of ["rebind.attacker.example:8080", "localhost.attacker.example:8080", "192.168.1.5:8080", "0.0.0.0:8080", "10.0.0.1:8080", undefined]) {
      expect(isConsoleHost(host, 8080, [])).toBe(false);
    }
  });

  test("CRM_ADMIN_HOSTS names more hosts: any port unless the entry names one", () => {
    const allowed = parseAdminHosts(" crm.example.com , admin.example.org:8443,10.0.0.5");
    expect(isConsoleHost("crm.example.com", 8080, allowed)).toBe(true);
    expect(isConsoleHost("CRM.example.com:443", 8080, allowed)).toBe(true);
    expect(isConsoleHost("admin.example.org:8443", 8080, allowed)).toBe(true);
    expect(isConsoleHost("admin.example.org", 8080, allowed)).toBe(false);
    expect(isConsoleHost("10.0.0.5:8080", 8080, allowed)).toBe(true);
    expect(isConsoleHost("crm.example.com.attacker.example", 8080, allowed)).toBe(false);
    expect(isConsoleHost("sub.crm.example.com", 8080, allowed)).toBe(false);
  });

  test("a CRM_ADMIN_HOSTS entry that is not a host is refused", () => {
    expect(() => parseAdminHosts("crm.example.com,https://x")).toThrow('"https://x" is not a host name');
    expect(parseAdminHosts("")).toEqual([]);
  });
});
