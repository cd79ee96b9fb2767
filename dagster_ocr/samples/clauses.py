"""The service agreement's numbered clauses and its payment schedule (Table 1), laid out by a ``_Flow``."""

from __future__ import annotations

from dagster_ocr.samples.typeset import TEXT_W, _Flow

_TABLE_HEADER = ["Milestone", "Due date", "Amount (¥)"]


def _payment_rows() -> list[list[str]]:
    """25 payment milestones and a total row; amounts add up (a quality check can verify that)."""
    rows: list[tuple[str, str, int]] = [
        ("Mobilisation fee", "2025-04-30", 2_500_000),
        ("Transition plan accepted (§ 2.2)", "2025-05-31", 1_800_000),
    ]
    months = ["Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Jan", "Feb", "Mar", "Apr", "May"]
    ends = ["30", "31", "31", "30", "31", "30", "31", "31", "28", "31", "30", "31"]
    for k in range(22):
        m = k % 12
        year = 2025 + (1 if k >= 7 else 0) + (1 if k >= 19 else 0)
        mm = (m + 5) % 12 + 1
        rows.append((f"Monthly service fee, {months[m]} {year}", f"{year}-{mm:02d}-{ends[m]}", 1_200_000))
    rows.append(("Final acceptance (§ 7.3)", "2027-03-31", 900_000))
    total = sum(r[2] for r in rows)
    out = [[name, due, f"{amount:,}"] for name, due, amount in rows]
    out.append(["Total", "", f"{total:,}"])
    return out


_PAYMENT_ROWS = _payment_rows()


def _contract_body(flow: _Flow) -> None:
    """Lay out the numbered clauses, the payment table and the closing provisions."""
    P = flow.para
    flow.heading("1. Definitions and Interpretation")
    P(
        "In this Agreement the capitalised terms listed in the Glossary of Defined Terms (page ii) have the "
        "meanings given there. Headings are for convenience only and do not affect interpretation.",
        label="1.1",
    )
    P("In this Agreement, unless the context otherwise requires:", label="1.2")
    P(
        "a reference to a clause (for example § 3) is a reference to a clause of this Agreement, and a "
        "reference "
        "to § 4.2 includes every sub-clause of § 4.2;",
        indent=26,
        label="(a)",
    )
    P(
        'words in the singular include the plural and vice versa, and "including" means including without '
        "limitation;",
        indent=26,
        label="(b)",
    )
    P(
        "amounts expressed in euro (€) are indicative only; the yen (¥) amount prevails in case of "
        "difference.",
        indent=26,
        label="(c)",
    )

    flow.heading("2. Services")
    flow.heading("2.1 Scope", size=11, keep_with=30)
    P("From the Effective Date the Supplier shall provide the following Services to the Customer:")
    P(
        "intake of paper and electronic documents at the Customer's Hamburg office, including scanning at a "
        "resolution of not less than 300 dpi;",
        indent=26,
        label="(a)",
    )
    P(
        "optical character recognition of every scanned page, with a character accuracy of at least 99.0 % "
        "measured on a monthly random sample of 200 pages;",
        indent=26,
        label="(b)",
    )
    P(
        "extraction of tables, page numbers and section headings into a structured database delivered to the "
        "Customer each Business Day;",
        indent=26,
        label="(c)",
    )
    P(
        "secure archiving of the originals for the Term and for twelve (12) months after it ends.",
        indent=26,
        label="(d)",
    )
    flow.heading("2.2 Service Levels", size=11, keep_with=30)
    P(
        "The Supplier shall meet the Service Levels in every calendar month. If the Supplier fails to meet a "
        "Service Level in two consecutive months, the Customer may withhold 5 % of the monthly service fee "
        "under § 4.2 until the failure is remedied, without prejudice to its rights under § 3.2."
    )
    flow.heading("2.3 Subcontracting", size=11, keep_with=30)
    P(
        "The Supplier may not subcontract any part of the Services without the Customer's prior written "
        "consent, which shall not be unreasonably withheld. The Supplier remains responsible for the acts "
        "and "
        "omissions of its subcontractors as if they were its own."
    )

    flow.heading("3. Term and Termination")
    P(
        "This Agreement starts on the Effective Date and continues for twenty-four (24) months unless "
        "terminated earlier under this § 3. It renews for successive periods of twelve (12) months unless "
        "either party gives notice at least ninety (90) days before the end of the then current Term.",
        label="3.1",
    )
    P(
        "Either party may terminate this Agreement with immediate effect by written notice if the other "
        "party:",
        label="3.2",
    )
    P(
        "commits a material breach which, if capable of remedy, is not remedied within thirty (30) days of a "
        "written notice describing the breach;",
        indent=26,
        label="(a)",
    )
    P(
        "becomes insolvent, enters into liquidation or has a receiver or administrator appointed over any of "
        "its assets; or",
        indent=26,
        label="(b)",
    )
    P(
        "fails to pay an undisputed amount due under § 4 within sixty (60) days of its due date.",
        indent=26,
        label="(c)",
    )
    P(
        "Termination does not affect rights accrued before it. Clauses 5, 6, 7 and 9 survive termination.",
        label="3.3",
    )
    P("On expiry or termination of this Agreement for any reason the Supplier shall:", label="3.4")
    P(
        "return to the Customer all original documents and storage media in its possession, in the order in "
        "which they were received;",
        indent=26,
        label="(a)",
    )
    P(
        "deliver a complete export of the database described in § 2.1(c) in an open format agreed by the "
        "parties, free of charge; and",
        indent=26,
        label="(b)",
    )
    P(
        "securely erase all copies of the Customer's data and certify the erasure in writing within thirty "
        "(30) days.",
        indent=26,
        label="(c)",
    )
    P(
        "At the Customer's request the Supplier shall continue to provide the Services for up to six (6) "
        "months "
        "after termination, at the Charges then applicable, to allow an orderly transfer to a new provider.",
        label="3.5",
    )

    flow.heading("4. Fees and Payment")
    P(
        "In consideration of the Services the Customer shall pay the Supplier a monthly service fee of "
        "¥1,200,000 (about €7,500) per § 4.2, together with the one-off fees listed in Table 1. All Charges "
        "exclude consumption tax and value added tax, which the Customer shall pay in addition.",
        label="4.1",
    )
    P(
        "The Charges fall due on the dates in Table 1. The Supplier shall invoice each amount no earlier "
        "than "
        "ten (10) Business Days before its due date; invoices are payable within thirty (30) days in yen to "
        "the account named in the invoice.",
        label="4.2",
    )
    P(
        "Late payments bear interest at 3 % per year above the Bank of Japan basic loan rate from the due "
        "date "
        "until payment. The Supplier may suspend the Services under § 3.2(c) if an undisputed invoice "
        "remains "
        "unpaid after a further reminder. The parties shall review the Charges once a year, and any change "
        "requires a written amendment signed by both parties.",
        label="4.3",
    )
    P(
        "The Customer shall reimburse reasonable travel expenses incurred at its request, at cost and "
        "against "
        "receipts, provided that any single trip above ¥300,000 (about €1,900) was approved in advance.",
        label="4.4",
    )
    P(
        "Each invoice shall state the contract number, the milestone in Table 1 to which it relates and the "
        "Supplier's registration number under the qualified invoice system. Invoices that do not meet these "
        "requirements are not payable until corrected, and the period for payment under § 4.2 starts on the "
        "day a corrected invoice is received. Disputed amounts shall be notified within fifteen (15) days of "
        "receipt of the invoice, stating the reasons, and the undisputed balance shall be paid when due.",
        label="4.5",
    )
    P(
        "The payment schedule is set out in Table 1 below. The amounts in Table 1 exclude consumption tax. "
        "The monthly service fee is fixed for the initial Term; the one-off fees are payable only when the "
        "corresponding milestone has been achieved and confirmed in writing by the Customer.",
        label="4.6",
    )
    flow.table(
        "Table 1 — Payment schedule (amounts in ¥, excluding tax)",
        _TABLE_HEADER,
        _PAYMENT_ROWS,
        widths=[240.0, 100.0, TEXT_W - 340.0],
        aligns=["left", "left", "right"],
    )
    P(
        "If a milestone in Table 1 is delayed for reasons attributable to the Customer, the corresponding "
        "amount falls due on the original due date. Otherwise it falls due thirty (30) days after the "
        "milestone is achieved.",
        label="4.7",
    )

    flow.heading("5. Intellectual Property")
    P(
        "Each party retains its Intellectual Property Rights existing before the Effective Date. The "
        "Supplier "
        "assigns to the Customer all Intellectual Property Rights in the Deliverables upon payment of the "
        'Charges that relate to them. Every Deliverable shall bear the notice "© 2025 Northwind Logistics '
        'GmbH. All rights reserved."',
        label="5.1",
    )
    P(
        "The Supplier grants the Customer a non-exclusive, royalty-free licence to use any of the Supplier's "
        "pre-existing materials that are embedded in the Deliverables, for the purpose of receiving and "
        "using "
        "the Services.",
        label="5.2",
    )

    flow.heading("6. Confidentiality")
    P(
        "Each party shall keep the other party's Confidential Information secret, use it only to perform "
        "this "
        "Agreement and disclose it only to those of its employees, advisers and subcontractors who need to "
        "know it and are bound by equivalent obligations.",
        label="6.1",
    )
    P(
        "The obligations in § 6.1 do not apply to information that is or becomes public other than through a "
        "breach of this Agreement, or that a party must disclose by law or by order of a competent court.",
        label="6.2",
    )

    flow.heading("7. Liability")
    P(
        "Neither party limits its liability for death or personal injury caused by its negligence, for "
        "fraud, "
        "or for any other liability that cannot be limited by law.",
        label="7.1",
    )
    P(
        "Subject to § 7.1, each party's total liability under this Agreement in each contract year is "
        "limited "
        "to ¥12,000,000 (about €75,000), and neither party is liable for loss of profit or for indirect "
        "loss.",
        label="7.2",
    )
    P(
        "Final acceptance of the Services takes place when the Customer confirms in writing that the "
        "Deliverables conform to Annex A; the Customer shall not unreasonably delay that confirmation.",
        label="7.3",
    )

    flow.heading("8. Data Protection")
    P(
        "Where the Supplier processes personal data on behalf of the Customer it does so as a processor "
        "under "
        "the data processing terms in Annex A, in compliance with Regulation (EU) 2016/679 and the Japanese "
        "Act on the Protection of Personal Information.",
        label="8.1",
    )

    flow.heading("9. Governing Law and Disputes")
    P(
        "This Agreement is governed by the laws of Japan. The parties shall first try to settle any dispute "
        "by "
        "negotiation between senior managers for thirty (30) days. Any dispute not so settled shall be "
        "finally "
        "resolved by arbitration in Tokyo under the rules of the Japan Commercial Arbitration Association, "
        "in "
        "the English language.",
        label="9.1",
    )

    flow.heading("10. General")
    P(
        "This Agreement is the entire agreement between the parties about its subject matter. No amendment "
        "is "
        "effective unless in writing and signed by both parties. Notices shall be sent to the addresses on "
        "the "
        "cover page. If any provision is held invalid, the remaining provisions remain in force.",
        label="10.1",
    )
    P("The signature page follows as Annex B.", italic=True)
