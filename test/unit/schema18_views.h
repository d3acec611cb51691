/*
 * schema18_views.h - the views contexts and stats and their INSTEAD OF
 * triggers as schema 18 stored them (plain SQL decoding the blobs: the
 * sqlite_master of a database made by piano at 2cb2d40, its last commit with
 * schema 18), for the test of the upgrade to 19, which drops them.
 * Generated: sqlite3 OLD.db "SELECT sql || ';' FROM sqlite_master WHERE type IN
 * ('view', 'trigger') AND name NOT LIKE 'functions%' ORDER BY type = 'trigger', rowid"
 */
#ifndef SCHEMA18_VIEWS_H
#define SCHEMA18_VIEWS_H

#define SCHEMA18_VIEWS \
    "CREATE VIEW contexts(run, thread, id, parent, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes) AS\n" \
    "WITH RECURSIVE d(run, thread, b, h, pos, x, id, f, k, acc, mul, oid, of, ov) AS (\n" \
    "  SELECT run, thread, nodes, instr(X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF', substr(nodes, 1, 1)) - 1, 2,\n" \
    "    instr(X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF', substr(nodes, 2, 1)) - 1, 0, 0, 0, 0, 1, NULL, NULL, NULL\n" \
    "  FROM context_trees WHERE length(nodes) >= 2\n" \
    "  UNION ALL\n" \
    "  SELECT run, thread, b, h, pos + 1, instr(X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF', substr(b, pos + 1, 1)) - 1,\n" \
    "    CASE WHEN x < 128 AND f = 0 THEN id + ((acc + (x & 127) * mul) >> 5) + 1 ELSE id END,\n" \
    "    CASE WHEN x >= 128 THEN f WHEN f < 2 THEN f + 1\n" \
    "      WHEN f = 2 THEN CASE WHEN k = 0 THEN 0 ELSE 3 END\n" \
    "      WHEN f - 2 >= k THEN 0 ELSE f + 1 END,\n" \
    "    CASE WHEN x < 128 AND f = 0 THEN (acc + (x & 127) * mul) & 31 ELSE k END,\n" \
    "    CASE WHEN x < 128 THEN 0 ELSE acc + (x & 127) * mul END,\n" \
    "    CASE WHEN x < 128 THEN 1 ELSE mul * 128 END,\n" \
    "    CASE WHEN x < 128 THEN CASE WHEN f = 0 THEN id + ((acc + (x & 127) * mul) >> 5) + 1 ELSE id END END,\n" \
    "    CASE WHEN x < 128 THEN f END,\n" \
    "    CASE WHEN x < 128 THEN acc + (x & 127) * mul END\n" \
    "  FROM d WHERE pos <= length(b))\n" \
    "SELECT run, thread, oid,\n" \
    "  max(CASE WHEN of = 1 AND ov > 0 THEN oid - ov END),\n" \
    "  max(CASE WHEN of = 2 THEN ov END),\n" \
    "  coalesce(max(CASE WHEN of = 3 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 4 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 4 THEN ov END), 0) + coalesce(max(CASE WHEN of = 5 THEN CASE WHEN ov & 1 THEN -(ov >> 1) - 1 ELSE ov >> 1 END END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 6 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 7 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 8 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 9 THEN ov END), 0),\n" \
    "  CASE WHEN max(h) & 1 AND 7 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 10 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 1 AND 8 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 11 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 1 AND 9 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 12 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 1 AND 10 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 13 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 1 AND 11 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 14 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 2 AND 12 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 15 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 2 AND 13 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 16 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 2 AND 14 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 17 THEN ov END), 0) END\n" \
    "FROM d WHERE of IS NOT NULL GROUP BY run, thread, oid\n" \
    "UNION ALL SELECT run, thread, id, parent, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes FROM context_rows;\n" \
    "CREATE VIEW stats(run, thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, hist_self, hist_total, child_calls, unfinished, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes) AS\n" \
    "WITH RECURSIVE d(run, thread, b, h, pos, x, fn, f, k, acc, mul, ofn, of, ov, ohb) AS (\n" \
    "  SELECT run, thread, fns, instr(X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF', substr(fns, 1, 1)) - 1, 2,\n" \
    "    instr(X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF', substr(fns, 2, 1)) - 1, -1, 0, 0, 0, 1, NULL, NULL, NULL, NULL\n" \
    "  FROM stat_trees WHERE length(fns) >= 2\n" \
    "  UNION ALL\n" \
    "  SELECT run, thread, b, h, pos + 1 + (CASE WHEN x < 128 AND f = 32 AND (acc + (x & 127) * mul) > 0 THEN (acc + (x & 127) * mul) - 1 WHEN x < 128 AND f = 33 AND (acc + (x & 127) * mul) > 1 THEN (acc + (x & 127) * mul) - 2 ELSE 0 END), instr(X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF', substr(b, pos + 1 + (CASE WHEN x < 128 AND f = 32 AND (acc + (x & 127) * mul) > 0 THEN (acc + (x & 127) * mul) - 1 WHEN x < 128 AND f = 33 AND (acc + (x & 127) * mul) > 1 THEN (acc + (x & 127) * mul) - 2 ELSE 0 END), 1)) - 1,\n" \
    "    CASE WHEN x < 128 AND f = 0 THEN fn + ((acc + (x & 127) * mul) >> 5) + 1 ELSE fn END,\n" \
    "    CASE WHEN x >= 128 THEN f WHEN f = 0 THEN CASE WHEN (acc + (x & 127) * mul) & 31 = 0 THEN 32 ELSE 1 END\n" \
    "      WHEN f < 32 THEN CASE WHEN f >= k THEN 32 ELSE f + 1 END WHEN f = 32 THEN 33 ELSE 0 END,\n" \
    "    CASE WHEN x < 128 AND f = 0 THEN (acc + (x & 127) * mul) & 31 ELSE k END,\n" \
    "    CASE WHEN x < 128 THEN 0 ELSE (acc + (x & 127) * mul) END,\n" \
    "    CASE WHEN x < 128 THEN 1 ELSE mul * 128 END,\n" \
    "    CASE WHEN x < 128 THEN CASE WHEN f = 0 THEN fn + ((acc + (x & 127) * mul) >> 5) + 1 ELSE fn END END,\n" \
    "    CASE WHEN x < 128 THEN f END,\n" \
    "    CASE WHEN x < 128 THEN (acc + (x & 127) * mul) END,\n" \
    "    CASE WHEN x < 128 AND f >= 32 THEN substr(b, pos + 1, (CASE WHEN x < 128 AND f = 32 AND (acc + (x & 127) * mul) > 0 THEN (acc + (x & 127) * mul) - 1 WHEN x < 128 AND f = 33 AND (acc + (x & 127) * mul) > 1 THEN (acc + (x & 127) * mul) - 2 ELSE 0 END)) END\n" \
    "  FROM d WHERE pos <= length(b))\n" \
    "SELECT run, thread, ofn,\n" \
    "  coalesce(max(CASE WHEN of = 1 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 2 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 2 THEN ov END), 0) + coalesce(max(CASE WHEN of = 3 THEN CASE WHEN ov & 1 THEN -(ov >> 1) - 1 ELSE ov >> 1 END END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 4 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 5 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 6 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 7 THEN ov END), 0),\n" \
    "  CASE WHEN max(CASE WHEN of = 32 THEN ov END) > 0 THEN max(CASE WHEN of = 32 THEN ohb END) END,\n" \
    "  CASE max(CASE WHEN of = 33 THEN ov END) WHEN 0 THEN NULL WHEN 1 THEN CASE WHEN max(CASE WHEN of = 32 THEN ov END) > 0 THEN max(CASE WHEN of = 32 THEN ohb END) END ELSE max(CASE WHEN of = 33 THEN ohb END) END,\n" \
    "  coalesce(max(CASE WHEN of = 8 THEN ov END), 0),\n" \
    "  coalesce(max(CASE WHEN of = 9 THEN ov END), 0),\n" \
    "  CASE WHEN max(h) & 1 AND 9 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 10 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 1 AND 10 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 11 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 1 AND 11 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 12 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 1 AND 12 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 13 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 1 AND 13 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 14 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 2 AND 14 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 15 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 2 AND 15 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 16 THEN ov END), 0) END,\n" \
    "  CASE WHEN max(h) & 2 AND 16 < max(h) >> 2 THEN coalesce(max(CASE WHEN of = 17 THEN ov END), 0) END\n" \
    "FROM d WHERE of IS NOT NULL GROUP BY run, thread, ofn\n" \
    "UNION ALL SELECT run, thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, hist_self, hist_total, child_calls, unfinished, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes FROM stat_rows;\n" \
    "CREATE TRIGGER contexts_insert INSTEAD OF INSERT ON contexts BEGIN\n" \
    "  INSERT INTO context_rows(run, thread, id, parent, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes) VALUES(NEW.run, NEW.thread, NEW.id, NEW.parent, NEW.fn, coalesce(NEW.calls, 0), coalesce(NEW.self_ns, 0), coalesce(NEW.total_ns, 0), coalesce(NEW.allocs, 0), coalesce(NEW.alloc_bytes, 0), coalesce(NEW.frees, 0), coalesce(NEW.free_bytes, 0), NEW.cpu_ns, NEW.cpu_total_ns, NEW.cpu_user_ns, NEW.cpu_sys_ns, NEW.offcpu_ns, NEW.inuse_objects, NEW.inuse_bytes, NEW.peak_inuse_bytes);\n" \
    "END;\n" \
    "CREATE TRIGGER contexts_update INSTEAD OF UPDATE ON contexts BEGIN\n" \
    "  INSERT INTO context_rows(run, thread, id, parent, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes) SELECT run, thread, id, parent, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes FROM contexts\n" \
    "    WHERE run = OLD.run AND thread = OLD.thread\n" \
    "    AND EXISTS (SELECT 1 FROM context_trees WHERE run = OLD.run AND thread = OLD.thread);\n" \
    "  DELETE FROM context_trees WHERE run = OLD.run AND thread = OLD.thread;\n" \
    "  UPDATE context_rows SET run = NEW.run, thread = NEW.thread, id = NEW.id, parent = NEW.parent, fn = NEW.fn, calls = NEW.calls, self_ns = NEW.self_ns, total_ns = NEW.total_ns, allocs = NEW.allocs, alloc_bytes = NEW.alloc_bytes, frees = NEW.frees, free_bytes = NEW.free_bytes, cpu_ns = NEW.cpu_ns, cpu_total_ns = NEW.cpu_total_ns, cpu_user_ns = NEW.cpu_user_ns, cpu_sys_ns = NEW.cpu_sys_ns, offcpu_ns = NEW.offcpu_ns, inuse_objects = NEW.inuse_objects, inuse_bytes = NEW.inuse_bytes, peak_inuse_bytes = NEW.peak_inuse_bytes WHERE run = OLD.run AND thread = OLD.thread AND id = OLD.id;\n" \
    "END;\n" \
    "CREATE TRIGGER contexts_delete INSTEAD OF DELETE ON contexts BEGIN\n" \
    "  INSERT INTO context_rows(run, thread, id, parent, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes) SELECT run, thread, id, parent, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes FROM contexts\n" \
    "    WHERE run = OLD.run AND thread = OLD.thread\n" \
    "    AND EXISTS (SELECT 1 FROM context_trees WHERE run = OLD.run AND thread = OLD.thread);\n" \
    "  DELETE FROM context_trees WHERE run = OLD.run AND thread = OLD.thread;\n" \
    "  DELETE FROM context_rows WHERE run = OLD.run AND thread = OLD.thread AND id = OLD.id;\n" \
    "END;\n" \
    "CREATE TRIGGER stats_insert INSTEAD OF INSERT ON stats BEGIN\n" \
    "  INSERT INTO stat_rows(run, thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, hist_self, hist_total, child_calls, unfinished, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes) VALUES(NEW.run, NEW.thread, NEW.fn, coalesce(NEW.calls, 0), coalesce(NEW.self_ns, 0), coalesce(NEW.total_ns, 0), coalesce(NEW.allocs, 0), coalesce(NEW.alloc_bytes, 0), coalesce(NEW.frees, 0), coalesce(NEW.free_bytes, 0), NEW.hist_self, NEW.hist_total, coalesce(NEW.child_calls, 0), coalesce(NEW.unfinished, 0), NEW.cpu_ns, NEW.cpu_total_ns, NEW.cpu_user_ns, NEW.cpu_sys_ns, NEW.offcpu_ns, NEW.inuse_objects, NEW.inuse_bytes, NEW.peak_inuse_bytes);\n" \
    "END;\n" \
    "CREATE TRIGGER stats_update INSTEAD OF UPDATE ON stats BEGIN\n" \
    "  INSERT INTO stat_rows(run, thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, hist_self, hist_total, child_calls, unfinished, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes) SELECT run, thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, hist_self, hist_total, child_calls, unfinished, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes FROM stats\n" \
    "    WHERE run = OLD.run AND thread = OLD.thread\n" \
    "    AND EXISTS (SELECT 1 FROM stat_trees WHERE run = OLD.run AND thread = OLD.thread);\n" \
    "  DELETE FROM stat_trees WHERE run = OLD.run AND thread = OLD.thread;\n" \
    "  UPDATE stat_rows SET run = NEW.run, thread = NEW.thread, fn = NEW.fn, calls = NEW.calls, self_ns = NEW.self_ns, total_ns = NEW.total_ns, allocs = NEW.allocs, alloc_bytes = NEW.alloc_bytes, frees = NEW.frees, free_bytes = NEW.free_bytes, hist_self = NEW.hist_self, hist_total = NEW.hist_total, child_calls = NEW.child_calls, unfinished = NEW.unfinished, cpu_ns = NEW.cpu_ns, cpu_total_ns = NEW.cpu_total_ns, cpu_user_ns = NEW.cpu_user_ns, cpu_sys_ns = NEW.cpu_sys_ns, offcpu_ns = NEW.offcpu_ns, inuse_objects = NEW.inuse_objects, inuse_bytes = NEW.inuse_bytes, peak_inuse_bytes = NEW.peak_inuse_bytes WHERE run = OLD.run AND thread = OLD.thread AND fn = OLD.fn;\n" \
    "END;\n" \
    "CREATE TRIGGER stats_delete INSTEAD OF DELETE ON stats BEGIN\n" \
    "  INSERT INTO stat_rows(run, thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, hist_self, hist_total, child_calls, unfinished, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes) SELECT run, thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes, hist_self, hist_total, child_calls, unfinished, cpu_ns, cpu_total_ns, cpu_user_ns, cpu_sys_ns, offcpu_ns, inuse_objects, inuse_bytes, peak_inuse_bytes FROM stats\n" \
    "    WHERE run = OLD.run AND thread = OLD.thread\n" \
    "    AND EXISTS (SELECT 1 FROM stat_trees WHERE run = OLD.run AND thread = OLD.thread);\n" \
    "  DELETE FROM stat_trees WHERE run = OLD.run AND thread = OLD.thread;\n" \
    "  DELETE FROM stat_rows WHERE run = OLD.run AND thread = OLD.thread AND fn = OLD.fn;\n" \
    "END;\n"

#endif
