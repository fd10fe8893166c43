import { describe, expect, test } from "bun:test";
import { parsePostgresUrl, withFailoverDefaults } from "../../src/db/postgres-url.ts";

describe("PostgreSQL URLs as postgres.js reads them", () => {
  test.each([
    ["postgres://u:p@db.example:6432/vend", [{ host: "db.example", port: 6432 }]],
    ["postgresql://db/vend", [{ host: "db", port: 5432 }]],
    [
      "postgres://u@h1:5432,h2:5433/vend?target_session_attrs=primary",
      [
        { host: "h1", port: 5432 },
        { host: "h2", port: 5433 },
      ],
    ],
    [
      "postgres://u@[::1]:5433,h2/vend",
      [
        { host: "::1", port: 5433 },
        { host: "h2", port: 5432 },
      ],
    ],
    ["postgres://u@/vend?host=/var/run/postgresql", [{ path: "/var/run/postgresql/.s.PGSQL.5432" }]],
    ["postgres://u@:5444/vend?host=/tmp", [{ path: "/tmp/.s.PGSQL.5444" }]],
    ["postgres://u@/vend", [{ host: "localhost", port: 5432 }]],
    ["postgres://u%40x:p%2Cw@h%31:5432/vend", [{ host: "h1", port: 5432 }]],
  ])("%s", (url, targets) => {
    expect(parsePostgresUrl(url).targets).toEqual(targets);
  });

  test.each(["mysql://h/db", "postgres://h:0/db", "postgres://h:70000/db", "postgres://h:port/db", "postgres://[::1/db"])(
    "%s is refused with the reason",
    (url) => {
      expect(() => parsePostgresUrl(url)).toThrow(/must be|cannot be read|out of range/);
    },
  );

  test("a failover URL asks for the primary unless it chose; read-write is refused with the reason", () => {
    expect(withFailoverDefaults("postgres://u@h1,h2/vend")).toBe("postgres://u@h1,h2/vend?target_session_attrs=primary");
    expect(withFailoverDefaults("postgres://u@h1,h2/vend?sslmode=disable")).toBe(
      "postgres://u@h1,h2/vend?sslmode=disable&target_session_attrs=primary",
    );
    expect(withFailoverDefaults("postgres://u@h1,h2/vend?target_session_attrs=any")).toBe(
      "postgres://u@h1,h2/vend?target_session_attrs=any",
    );
    expect(withFailoverDefaults("postgres://u@h1/vend")).toBe("postgres://u@h1/vend");
    expect(() => withFailoverDefaults("postgres://u@h1,h2/vend?target_session_attrs=read-write")).toThrow(
      "target_session_attrs=primary",
    );
  });
});
