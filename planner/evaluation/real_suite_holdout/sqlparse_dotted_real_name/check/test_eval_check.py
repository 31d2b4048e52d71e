import sqlparse


def _first(sql, index=0):
    return sqlparse.parse(sql)[0].tokens[index]


def test_the_real_name_is_the_part_after_the_last_dot():
    table = _first("SELECT * FROM warehouse.sales.orders", -1)
    assert table.get_real_name() == "orders"
    assert table.get_name() == "orders"
    assert table.get_parent_name() == "warehouse"
    assert _first("db.schema.tbl.col").get_real_name() == "col"
    aliased = _first("x.y.z AS w")
    assert aliased.get_real_name() == "z"
    assert aliased.get_alias() == "w"


def test_two_part_names_and_aliases_are_unchanged():
    assert _first("SELECT * FROM sales.orders", -1).get_real_name() == "orders"
    aliased = _first("x.y AS w")
    assert aliased.get_real_name() == "y"
    assert aliased.get_parent_name() == "x"
    assert aliased.get_name() == "w"
