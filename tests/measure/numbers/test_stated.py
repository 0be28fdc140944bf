"""An answer stated first and then explained is read where it is stated; a premise is not."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers import read_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("She has 15 apples left. She started with 20, ate 3, and gave 2 to her brother.", 15),  # first less the rest
        ("**42 seats.**\n\nThere are 6 rows with 7 seats in each row.", 42),  # alone on its line
        ("The total cost is $240. That's 8 hours of work at $30 per hour.", 240),  # a product
        ("It's 12. Each of the 4 boxes holds 3 toys.", 12),
        ("You'll need 7 buses. With 50 students per bus, 6 buses carry only 300 of the 320 students.", 7),  # rounded up
        ("Kira read 168 pages in total: 24 pages a day for 7 days.", 168),
        ("Final balance: $1,150. She deposited $1,000 and earned 15% interest, which is $150.", 1150),  # two added
        ("There will be 14 people at the party: 5 adults and 9 children.", 14),  # a colon sets out the parts
        ("**$96**\n\nShe buys 3 shirts at $20 and 2 hats at $18.", 96),  # products of pairs added up
        ("Its volume is 125 cm^3, since each side is 5 cm.", 125),  # ", since": an explanation follows
        ("The total is 95. Breakdown: 40 + 30 + 25.", 95),
        ("She saves 20%. That is $40 out of $200.", 20),  # a percentage, as a fraction
        ("6 hours. Working together, Ann and Ben paint 1/6 of the house per hour.", 6),  # one inverted
    ],
)
def test_an_answer_stated_then_explained(text: str, value: float) -> None:
    assert read_number(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The car travels 60 miles per hour. In 3 hours it goes 180 miles.", 180),  # a premise, then the answer
        ("The pizza has 8 slices. Each of the 4 friends gets 2 slices.", 2),
        ("Tom has 12 apples. He gives 4 to Ann and 3 to Ben. He has 5 left.", 5),  # the last sentence concludes
        ("Each box holds 6 eggs. With 4 boxes there are 24 eggs.", 24),  # "Each": a premise
        ("The total is 48. So 48 + 2 = 50.", 50),  # a later equation brings another value
    ],
)
def test_a_premise_first_is_worked_from(text: str, value: float) -> None:
    assert read_number(text) == value
