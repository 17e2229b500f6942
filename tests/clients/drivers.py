"""The Python drivers users bring, against one compute node: psycopg 2
(with a named cursor), psycopg 3 (prepared statements, server-side
cursors) and SQLAlchemy 2 (reflection, create_all, ORM with SERIAL ids).

psycopg 2 and 3 each bring their own libpq: the checks run one driver per
process (`drivers.py ... psycopg2|psycopg3|sqlalchemy`).

Run by the cluster suite (`clients::python_drivers`) as
`python3 drivers.py HOST PORT USER PASSWORD`; prints one line per check and
exits non-zero on the first failure.
"""

import sys

HOST, PORT, USER, PASSWORD = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
DSN = f"host={HOST} port={PORT} user={USER} password={PASSWORD} dbname=tessera"


def check(what, got, expected):
    if got != expected:
        print(f"FAIL {what}: got {got!r}, expected {expected!r}")
        sys.exit(1)
    print(f"ok   {what}")


def psycopg2_checks():
    import psycopg2

    conn = psycopg2.connect(DSN)
    cur = conn.cursor()
    # Autocommit off: DDL arrives inside a transaction block.
    cur.execute("CREATE TABLE drv_p2 (id serial PRIMARY KEY, name varchar(20) NOT NULL, amount numeric(10,2))")
    cur.executemany("INSERT INTO drv_p2 (name, amount) VALUES (%s, %s)", [("a", 1.5), ("b", 2.25)])
    conn.commit()
    cur.execute("SELECT id, name, amount FROM drv_p2 ORDER BY id")
    rows = cur.fetchall()
    check("psycopg2 rows", [(r[0], r[1], str(r[2])) for r in rows], [(1, "a", "1.50"), (2, "b", "2.25")])
    check("psycopg2 description names", [d.name for d in cur.description], ["id", "name", "amount"])
    # A named (server-side) cursor: DECLARE, FETCH FORWARD n, CLOSE.
    named = conn.cursor(name="drv_named")
    named.itersize = 1
    named.execute("SELECT id, name FROM drv_p2 WHERE id >= %s ORDER BY id", (1,))
    check("psycopg2 named cursor", [r for r in named], [(1, "a"), (2, "b")])
    named.close()
    conn.commit()
    cur.execute("DROP TABLE drv_p2")
    conn.commit()
    conn.close()


def psycopg3_checks():
    import psycopg

    with psycopg.connect(DSN, autocommit=True, application_name="drv") as conn:
        # This session in pg_stat_activity, under its application_name.
        me = "SELECT application_name, state FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        check("pg_stat_activity", conn.execute(me).fetchall(), [("drv", "active")])
        conn.execute("SET application_name = 'drv2'")
        check("SET application_name", conn.execute(me, prepare=True).fetchall(), [("drv2", "active")])
        conn.execute("CREATE TABLE drv_p3 (id int PRIMARY KEY, v text)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO drv_p3 VALUES (%s, %s)", [(i, f"v{i}") for i in range(10)])
        # Server-side prepared statements, executed many times.
        for i in range(8):
            row = conn.execute("SELECT v FROM drv_p3 WHERE id = %s", (i,), prepare=True).fetchone()
            check(f"psycopg prepared execution {i}", row, (f"v{i}",))
        # Server-side cursors, without and with hold.
        with conn.transaction():
            with conn.cursor(name="drv_sc") as sc:
                sc.itersize = 3
                sc.execute("SELECT id FROM drv_p3 WHERE id < %s ORDER BY id", (8,))
                check("psycopg server cursor fetchmany", sc.fetchmany(2), [(0,), (1,)])
                check("psycopg server cursor rest", len(sc.fetchall()), 6)
                check("psycopg server cursor description", [d.name for d in sc.description], ["id"])
        with conn.cursor(name="drv_hold", withhold=True) as h:
            h.execute("SELECT v FROM drv_p3 ORDER BY id")
            check("psycopg cursor WITH HOLD", len(h.fetchall()), 10)
        # A Python list is an array parameter (int2[] / text[] by OID).
        got = conn.execute("SELECT id FROM drv_p3 WHERE id = ANY(%s) ORDER BY id", ([2, 5, 40],)).fetchall()
        check("psycopg ANY(list of int)", got, [(2,), (5,)])
        got = conn.execute("SELECT id FROM drv_p3 WHERE id = ANY(%s) ORDER BY id", ([2**40, 3],)).fetchall()
        check("psycopg ANY(list of bigint) over an int column", got, [(3,)])
        check("psycopg ANY(empty list)", conn.execute("SELECT id FROM drv_p3 WHERE id = ANY(%s)", ([],)).fetchall(), [])
        got = conn.execute("SELECT id FROM drv_p3 WHERE v = ANY(%s) ORDER BY id", (["v1", "v 9", None],)).fetchall()
        check("psycopg ANY(list of str)", got, [(1,)])
        check("psycopg array parameter cast", conn.execute("SELECT %s::int[]", ([1, 2],)).fetchone(), ([1, 2],))
        # COPY TO with HEADER writes the header line (a copy out and back
        # in with HEADER must not lose a row).
        with conn.cursor() as cur:
            with cur.copy("COPY (SELECT id, v FROM drv_p3 WHERE id < 2 ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER true)") as cp:
                out = b"".join(bytes(b) for b in cp)
        check("COPY TO CSV HEADER", out, b"id,v\n0,v0\n1,v1\n")
        with conn.cursor() as cur:
            with cur.copy("COPY drv_p3 (id, v) TO STDOUT WITH (FORMAT csv, FORCE_QUOTE *, DELIMITER ';')") as cp:
                out = b"".join(bytes(b) for b in cp)
        check("COPY TO CSV FORCE_QUOTE *", sorted(out.splitlines())[:2], [b'"0";"v0"', b'"1";"v1"'])
        # Upserts as ORMs write them: ON CONFLICT ... RETURNING with
        # parameters, prepared (the extended protocol); the row after the
        # insert or the update, only the rows inserted for DO NOTHING.
        up = (
            "INSERT INTO drv_p3 AS t (id, v) VALUES (%s, %s) ON CONFLICT (id) "
            "DO UPDATE SET v = EXCLUDED.v RETURNING t.id, v AS value, upper(t.v)"
        )
        for i, (key, v) in enumerate([(3, "new3"), (42, "v42"), (42, "w42")]):
            cur = conn.execute(up, (key, v), prepare=True)
            check(f"psycopg upsert RETURNING {i}", cur.fetchall(), [(key, v, v.upper())])
            check(f"psycopg upsert RETURNING {i} tag", cur.statusmessage, "INSERT 0 1")
        check("psycopg upsert RETURNING names", [d.name for d in cur.description], ["id", "value", "upper"])
        cur = conn.execute(
            "INSERT INTO drv_p3 VALUES (%s, %s), (%s, %s), (%s, %s) ON CONFLICT DO NOTHING RETURNING *",
            (42, "x", 43, "v43", 5, "x"),
            prepare=True,
        )
        check("psycopg DO NOTHING RETURNING", (cur.fetchall(), cur.statusmessage), ([(43, "v43")], "INSERT 0 1"))
        # SHOW's command tag carries no row count.
        check("SHOW tag", conn.execute("SHOW TimeZone").statusmessage, "SHOW")
        check("SHOW tag, prepared", conn.execute("SHOW TimeZone", prepare=True).statusmessage, "SHOW")
        conn.execute("DROP TABLE drv_p3")


def sqlalchemy_checks():
    from sqlalchemy import Column, Index, Integer, Numeric, String, create_engine, inspect, select
    from sqlalchemy.orm import DeclarativeBase, Session

    engine = create_engine(f"postgresql+psycopg2://{USER}:{PASSWORD}@{HOST}:{PORT}/tessera")

    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = "drv_sa_item"
        id = Column(Integer, primary_key=True)
        name = Column(String(30), nullable=False)
        price = Column(Numeric(8, 2))
        __table_args__ = (Index("drv_sa_name", "name", "price"),)

    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    insp = inspect(engine)
    check("sqlalchemy has_table", insp.has_table("drv_sa_item"), True)
    cols = insp.get_columns("drv_sa_item")
    check(
        "sqlalchemy reflected columns",
        [(c["name"], str(c["type"]), c["nullable"]) for c in cols],
        [("id", "INTEGER", False), ("name", "VARCHAR(30)", False), ("price", "NUMERIC(8, 2)", True)],
    )
    check("sqlalchemy primary key", insp.get_pk_constraint("drv_sa_item")["constrained_columns"], ["id"])
    # Index reflection reads pg_index's int2vector / oidvector columns.
    idx = insp.get_indexes("drv_sa_item")
    check(
        "sqlalchemy reflected indexes",
        [(i["name"], i["column_names"], i["unique"]) for i in idx],
        [("drv_sa_name", ["name", "price"], False)],
    )
    with Session(engine) as s:
        s.add_all([Item(name="x", price=1), Item(name="y", price=2)])
        s.commit()
        ids = [i.id for i in s.scalars(select(Item).order_by(Item.id))]
        check("sqlalchemy ORM SERIAL ids", ids, [1, 2])
    # SQLAlchemy's PostgreSQL upsert with RETURNING.
    from sqlalchemy.dialects.postgresql import insert

    with Session(engine) as s:
        stmt = insert(Item).values([{"id": 2, "name": "y2", "price": 5}, {"id": 3, "name": "z", "price": 6}])
        stmt = stmt.on_conflict_do_update(index_elements=[Item.id], set_={"name": stmt.excluded.name})
        got = s.execute(stmt.returning(Item.id, Item.name, Item.price)).all()
        s.commit()
        check("sqlalchemy on_conflict_do_update returning", [(r[0], r[1], str(r[2])) for r in got], [(2, "y2", "2.00"), (3, "z", "6.00")])
    Base.metadata.drop_all(engine)
    check("sqlalchemy drop_all", inspect(engine).has_table("drv_sa_item"), False)


if __name__ == "__main__":
    {"psycopg2": psycopg2_checks, "psycopg3": psycopg3_checks, "sqlalchemy": sqlalchemy_checks}[sys.argv[5]]()
    print("all driver checks passed")
