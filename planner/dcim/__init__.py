"""The planner and the DCIM (SPEC §20): a plan written out (placement CSV, Excel, the NetBox
bundle), pushed into a running NetBox, and a site read back from one — whether the planner wrote it
or NetBox's users kept it. Not plan-making: it stands on plans and scenarios made below it.

- :mod:`planner.dcim.exports` — ``planner export``: CSV, Excel, NetBox bundle and API payload.
- :mod:`planner.dcim.bundle` — the NetBox objects of a plan (CSV import columns, REST payload).
- :mod:`planner.dcim.push` — ``planner netbox push``: create, update, retire through the REST API.
- :mod:`planner.dcim.client` — a NetBox REST client that trusts no server.
- :mod:`planner.dcim.site`, :mod:`planner.dcim.rows` — ``planner import netbox``: NetBox's rows
  (API, import-column CSVs, its own export) and the planner's custom-field convention.
- :mod:`planner.dcim.native`, :mod:`planner.dcim.build` — a site kept the NetBox way.

May import: every stage up to :mod:`planner.plan` (not the library, batches, decomposition,
explanations nor the CLI).
"""
