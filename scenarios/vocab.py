"""Word lists and reference tables the generator draws from.

Everything here is constant data: names, places, banks, commodities with realistic price
bands, jurisdictions. The FATF lists are a snapshot (public statements of 2025) and are used
only to populate synthetic cases; the manual tells investigators to check the current list.
"""

from __future__ import annotations

BANK_NAME = "First Meridian Bank"
BANK_COUNTRY = "US"

BRANCHES = (
    "Branch 014 Elm Street", "Branch 022 Harbor Plaza", "Branch 031 Riverside",
    "Branch 047 Northgate Mall", "Branch 053 Union Square", "Branch 068 Airport Road",
    "Branch 072 Westfield", "Branch 089 Old Town",
)

FIRST_NAMES = (
    "James", "Maria", "Wei", "Aisha", "Daniel", "Olena", "Carlos", "Priya", "Kwame", "Sofia",
    "Hiroshi", "Fatima", "Liam", "Elena", "Mohammed", "Grace", "Tomasz", "Amara", "Diego",
    "Nadia", "Samuel", "Leila", "Viktor", "Chloe", "Rajesh", "Ines", "Obinna", "Hannah",
    "Mateo", "Yuki", "Andre", "Zainab", "Patrick", "Lucia", "Dmitri", "Ama", "Jonas", "Mei",
    "Ricardo", "Sara", "Emeka", "Claire", "Arjun", "Nora", "Hassan", "Julia", "Felix", "Rosa",
)
LAST_NAMES = (
    "Okafor", "Lindqvist", "Chen", "Haddad", "Moreno", "Kowalski", "Nakamura", "Petrov",
    "Mensah", "Fischer", "Rahman", "Silva", "Novak", "Dubois", "Mwangi", "Kaur", "Romano",
    "Jensen", "Alvarez", "Tanaka", "Osei", "Brennan", "Volkova", "Castillo", "Nguyen",
    "Abdullah", "Morgan", "Sato", "Ibrahim", "Kovacs", "Reyes", "Andersson", "Balogun",
    "Whitfield", "Marchetti", "Horvat", "Qureshi", "Lambert", "Ferreira", "Adeyemi",
)
# Spelling variants a name-screening system must not confuse with the original.
NAME_VARIANTS = {
    "Mohammed": "Muhammad", "Dmitri": "Dmitry", "Viktor": "Victor", "Olena": "Elena",
    "Hassan": "Hasan", "Zainab": "Zaynab", "Rajesh": "Rajeshwar", "Mateo": "Matteo",
    "Petrov": "Petrof", "Volkova": "Volkava", "Rahman": "Rehman", "Qureshi": "Koreshi",
    "Ibrahim": "Ebrahim", "Haddad": "Hadad", "Nguyen": "Nguyn", "Okafor": "Okafur",
}

OCCUPATIONS_SALARIED = (
    ("warehouse supervisor", 52_000), ("dental hygienist", 78_000), ("bus driver", 48_000),
    ("retail store manager", 61_000), ("high-school teacher", 58_000),
    ("IT support technician", 55_000), ("nurse", 82_000), ("delivery driver", 41_000),
    ("administrative assistant", 44_000), ("electrician", 66_000),
)
# Ages at which a subject plausibly holds an occupation (others: WORKING_AGES).
WORKING_AGES = (24, 64)
OCCUPATION_AGES = {
    "student": (18, 26), "orthopaedic surgeon": (34, 68), "partner, law firm": (35, 70),
    "real-estate developer": (30, 72), "investment banker": (27, 60), "public official": (35, 72),
}
OCCUPATIONS_AFFLUENT = (
    ("orthopaedic surgeon", 420_000), ("partner, law firm", 650_000),
    ("real-estate developer", 900_000), ("investment banker", 780_000),
)

CASH_BUSINESSES = (
    ("full-service restaurant", 1_400_000), ("convenience store", 900_000),
    ("coin laundromat", 380_000), ("car wash", 620_000), ("bar and grill", 1_100_000),
    ("grocery and deli", 1_800_000), ("parking garage operator", 750_000),
)
NON_CASH_BUSINESSES = (
    ("software consultancy", 2_400_000), ("architectural practice", 1_600_000),
    ("medical device distributor", 6_500_000), ("freight forwarder", 9_000_000),
)
FANOUT_BUSINESSES = (
    ("contract manufacturer", 38_000_000, 310), ("regional logistics operator", 24_000_000, 190),
    ("commercial cleaning services", 9_500_000, 260), ("home-care agency", 14_000_000, 340),
    ("food processing plant", 31_000_000, 280),
)
SHELL_BUSINESS_TYPES = (
    "general trading", "management consultancy", "investment holding",
    "business advisory services", "import and export",
)

# Companies that hold assets rather than trade: no staff, or a handful, is normal for them.
HOLDING_BUSINESS_TYPES = frozenset(SHELL_BUSINESS_TYPES) | {
    "private investment company", "residential property holding", "real-estate investment",
    "family holding company"}
# Annual sales per employee of an operating small business, order of magnitude (US Census
# Bureau, Statistics of U.S. Businesses: receipts over paid employees, most sectors).
SALES_PER_EMPLOYEE_USD = (90_000, 300_000)

COMPANY_WORDS_A = (
    "Harbor", "Summit", "Blue", "Granite", "Meridian", "Pioneer", "Silver", "Crescent",
    "Northwind", "Oakline", "Redwood", "Atlas", "Beacon", "Cobalt", "Evergreen", "Falcon",
    "Golden", "Ironbridge", "Juniper", "Keystone", "Lakeside", "Maple", "Orion", "Sterling",
)
COMPANY_WORDS_B = (
    "Ridge", "Point", "Valley", "Stone", "Gate", "Field", "Bay", "Crest", "Harbour", "Peak",
    "Line", "Way", "Park", "Rock", "Bridge", "Wood",
)
COMPANY_KINDS = ("Trading", "Industries", "Group", "Supply", "Partners", "Holdings")
SHELL_WORDS = (
    "Aldwych", "Belgrave", "Cavendish", "Dorset", "Ellesmere", "Fenwick", "Grosvenor",
    "Halcyon", "Inverness", "Kensal", "Lowther", "Montague", "Norland", "Portman", "Radnor",
    "Somerton", "Trevelyan", "Wexford", "Ashdown", "Brompton",
)
SHELL_SUFFIX_WORDS = ("Global Holdings", "Ventures", "Capital Partners", "International",
                      "Trading", "Investments", "Asset Management", "Consulting Group")
LEGAL_SUFFIX = {
    "US": "LLC", "VG": "Ltd", "KY": "Ltd", "SC": "Ltd", "PA": "S.A.", "BZ": "Ltd",
    "MH": "Inc.", "AE": "FZE", "CY": "Ltd", "HK": "Limited", "GB": "Ltd", "SG": "Pte. Ltd.",
    "CH": "AG", "LU": "S.a r.l.", "MT": "Ltd", "VN": "Co., Ltd", "KE": "Ltd", "CI": "SARL",
    "CM": "SARL", "LA": "Co., Ltd", "BG": "EOOD", "NG": "Ltd", "DE": "GmbH", "NL": "B.V.",
    "MY": "Sdn. Bhd.",
}

# Registered-agent addresses used by company-formation providers.
FORMATION_AGENT_ADDRESSES = {
    "VG": "c/o Tortola Corporate Services, Wickhams Cay II, Road Town, Tortola, VG",
    "KY": "c/o Harbour Registered Office Ltd, 190 Elgin Avenue, George Town, KY",
    "SC": "c/o Mahe Company Secretaries, Suite 9, Victoria, Mahe, SC",
    "PA": "c/o Istmo Nominees, Calle 50, Torre Global, Piso 22, Panama City, PA",
    "BZ": "c/o Belize Offshore Agents, 35 Barrack Road, Belize City, BZ",
    "MH": "c/o Trust Company Complex, Ajeltake Road, Majuro, MH",
    "AE": "c/o Free Zone Formation Centre, Business Bay, Dubai, AE",
    "CY": "c/o Agora Fiduciary, 12 Themistokli Dervi, Nicosia, CY",
    "US": "c/o Registered Agents Inc., 1013 Centre Road, Suite 403, Wilmington, DE, US",
}

STREETS = ("Maple Ave", "Oak St", "Cedar Ln", "Lincoln Blvd", "Park Rd", "Hillcrest Dr",
           "Washington St", "Lakeview Ter", "Sunset Blvd", "Chestnut St", "River Rd")
CITIES = {
    "US": ("Newark, NJ", "Jersey City, NJ", "Paterson, NJ", "Brooklyn, NY", "Queens, NY",
           "Yonkers, NY", "Stamford, CT"),
    "GB": ("London",), "CH": ("Geneva", "Zurich"), "SG": ("Singapore",), "HK": ("Hong Kong",),
    "AE": ("Dubai",), "CY": ("Limassol",), "LU": ("Luxembourg",), "DE": ("Hamburg",),
    "NL": ("Rotterdam",), "MY": ("Kuala Lumpur",), "VN": ("Ho Chi Minh City", "Hai Phong"),
    "KE": ("Mombasa", "Nairobi"), "CI": ("Abidjan",), "CM": ("Douala",), "LA": ("Vientiane",),
    "BG": ("Varna",), "NG": ("Lagos",), "PA": ("Panama City",), "VG": ("Road Town",),
    "KY": ("George Town",), "SC": ("Victoria",), "BZ": ("Belize City",), "MT": ("Valletta",),
    "MH": ("Majuro",),
    "TR": ("Istanbul", "Mersin"), "AM": ("Yerevan",), "KG": ("Bishkek",), "KZ": ("Almaty",),
    "GE": ("Tbilisi", "Poti"), "RU": ("Moscow", "St Petersburg"), "BY": ("Minsk",),
}

COUNTRY_NAMES = {
    "US": "United States", "GB": "United Kingdom", "CH": "Switzerland", "SG": "Singapore",
    "HK": "Hong Kong", "AE": "United Arab Emirates", "CY": "Cyprus", "LU": "Luxembourg",
    "DE": "Germany", "NL": "Netherlands", "MY": "Malaysia", "VN": "Viet Nam", "KE": "Kenya",
    "CI": "Cote d'Ivoire", "CM": "Cameroon", "LA": "Lao PDR", "BG": "Bulgaria",
    "NG": "Nigeria", "PA": "Panama", "VG": "British Virgin Islands", "KY": "Cayman Islands",
    "SC": "Seychelles", "BZ": "Belize", "MT": "Malta", "MH": "Marshall Islands",
    "IR": "Iran", "KP": "North Korea", "MM": "Myanmar", "TR": "Turkiye", "AM": "Armenia",
    "KG": "Kyrgyzstan", "KZ": "Kazakhstan", "GE": "Georgia", "RU": "Russia", "BY": "Belarus",
}

# FATF "call for action" and "increased monitoring" lists, 2025 snapshot.
FATF_CALL_FOR_ACTION = ("KP", "IR", "MM")
FATF_INCREASED_MONITORING = (
    "DZ", "AO", "BO", "BG", "CM", "CI", "CD", "HT", "KE", "LA", "LB", "MC", "NA", "NP",
    "SS", "SY", "VE", "VN", "VG", "YE",
)
HIGH_RISK_JURISDICTIONS = FATF_CALL_FOR_ACTION + FATF_INCREASED_MONITORING
# Low-tax, high-secrecy company-formation centres (not a FATF list; a CDD risk factor).
OFFSHORE_CENTRES = ("VG", "KY", "SC", "PA", "BZ", "MH", "AE", "CY")
TRADE_HUBS = ("SG", "HK", "AE", "NL", "DE", "GB", "MY")
HIGH_RISK_SUPPLIER_COUNTRIES = ("VN", "KE", "CI", "CM", "LA", "BG")
# Jurisdictions that FinCEN/BIS joint alerts (FIN-2022-A003, FIN-2023-NTCA002) name as common
# transshipment points for export-controlled goods.
TRANSSHIPMENT_HUBS = ("AE", "TR", "AM", "KG", "KZ", "GE", "HK")
# Where the owners of a hub trading company live (the same draw whatever they are listed for).
HUB_OWNER_COUNTRIES = ("RU", "BY", "AE", "TR", "KZ", "CY")

CORRESPONDENT_BANKS = {
    "US": ("Hudson Commercial Bank", "Atlantic Trust Company", "Liberty National Bank"),
    "GB": ("Thameside Bank plc",), "CH": ("Banque Privee Lacroix SA", "Alpenrose Privatbank AG"),
    "SG": ("Straits Merchant Bank",), "HK": ("Victoria Harbour Bank",),
    "AE": ("Gulf Emirates Commercial Bank",), "CY": ("Troodos Commercial Bank",),
    "LU": ("Banque du Grand-Duche SA",), "DE": ("Hanseatische Handelsbank",),
    "NL": ("Maasbank N.V.",), "MY": ("Bank Seri Perdana",), "VN": ("Saigon Trade Bank",),
    "KE": ("Coastal Commercial Bank Kenya",), "CI": ("Banque Atlantique de Cote d'Ivoire",),
    "CM": ("Banque du Littoral",), "LA": ("Mekong Development Bank",),
    "BG": ("Black Sea Commercial Bank",), "NG": ("Lagoon Bank Plc",),
    "PA": ("Banco Canal Internacional",), "VG": ("Tortola Island Bank",),
    "KY": ("Caymanian Fiduciary Bank",), "SC": ("Seychelles International Bank",),
    "BZ": ("Caribbean Offshore Bank",), "MT": ("Melita Private Bank",),
    "MH": ("Pacific Atoll Bank",), "TR": ("Bosphorus Ticaret Bankasi",),
    "AM": ("Ararat Commercial Bank",), "KG": ("Tien Shan Bank",), "KZ": ("Steppe Trade Bank",),
    "GE": ("Colchis Bank",),
}

# Commodity, unit, market low, market high (USD), typical lot size range.
COMMODITIES = (
    ("cocoa beans", "tonne", 2_600.0, 3_300.0, (40, 180)),
    ("copper cathode", "tonne", 8_200.0, 9_400.0, (20, 120)),
    ("frozen shrimp", "kg", 6.5, 9.0, (8_000, 40_000)),
    ("cotton lint", "tonne", 1_550.0, 1_900.0, (60, 300)),
    ("robusta coffee", "tonne", 3_800.0, 4_600.0, (30, 150)),
    ("mid-range smartphones", "unit", 140.0, 210.0, (1_000, 8_000)),
    ("used passenger cars", "unit", 4_000.0, 9_000.0, (10, 60)),
    ("black tea (CTC)", "kg", 2.2, 3.2, (10_000, 80_000)),
    ("sawn hardwood timber", "m3", 380.0, 620.0, (100, 900)),
    ("polyethylene resin", "tonne", 950.0, 1_250.0, (50, 400)),
    # Common High Priority List items (export-controlled electronics and machine parts).
    ("integrated circuits", "unit", 1.8, 2.6, (20_000, 150_000)),
    ("ball bearings", "unit", 3.5, 5.5, (8_000, 60_000)),
)
HUB_COMMODITIES = {
    "AE": ("integrated circuits", "ball bearings", "mid-range smartphones"),
    "TR": ("ball bearings", "integrated circuits"), "AM": ("integrated circuits",),
    "KG": ("integrated circuits", "ball bearings"), "KZ": ("ball bearings",),
    "GE": ("integrated circuits", "ball bearings"), "HK": ("integrated circuits",
                                                          "mid-range smartphones"),
}
SUPPLIER_COMMODITIES = {
    "VN": ("frozen shrimp", "robusta coffee", "mid-range smartphones"),
    "KE": ("black tea (CTC)",),
    "CI": ("cocoa beans",), "CM": ("cocoa beans", "sawn hardwood timber"),
    "LA": ("sawn hardwood timber",), "BG": ("polyethylene resin", "cotton lint"),
    "SG": ("mid-range smartphones", "polyethylene resin"), "HK": ("mid-range smartphones",),
    "AE": ("used passenger cars", "copper cathode"), "NL": ("polyethylene resin",),
    "DE": ("used passenger cars", "copper cathode"), "GB": ("copper cathode",),
    "MY": ("polyethylene resin", "frozen shrimp"),
}
PORTS = {
    "US": "Port Newark", "VN": "Cat Lai", "KE": "Mombasa", "CI": "Abidjan", "CM": "Douala",
    "LA": "Vientiane Dry Port", "BG": "Varna", "SG": "Singapore", "HK": "Kwai Tsing",
    "AE": "Jebel Ali", "NL": "Rotterdam", "DE": "Hamburg", "GB": "Felixstowe",
    "MY": "Port Klang", "TR": "Mersin", "GE": "Poti",
}
VESSELS = (
    "MSC Aurelia", "Maersk Halden", "CMA CGM Tage", "Ever Gracious", "ONE Harmony",
    "Hapag Lisbon", "Yang Ming Unity", "COSCO Pacific Star", "HMM Garnet", "Zim Sapphire",
)
PRICE_SOURCES = ("LME settlement", "ICE Futures settlement", "national customs unit values",
                 "industry price survey")

PEP_POSITIONS = (
    "Deputy Minister of Finance", "Member of Parliament", "Governor, central bank",
    "Director-General, state ports authority", "Ambassador", "Mayor of the capital",
    "Chairman, state-owned energy company", "Justice of the Supreme Court",
)
PEP_COUNTRIES = ("MY", "NG", "KE", "BG", "PA", "VN", "CY")

# Funnel-rule customers: people and businesses whose receipts arrive from many places.
DISPERSED_EARNERS = (
    ("online marketplace seller", 60_000), ("travelling sales representative", 72_000),
    ("rideshare driver", 38_000), ("student", 18_000), ("event vendor", 45_000),
)
DISPERSED_BUSINESSES = (
    ("franchise operator, home services", 1_200_000), ("online marketplace retailer", 900_000),
    ("regional distributor, consumer goods", 2_500_000), ("mobile phone retailer", 800_000),
)
RETIREMENT_INCOME = (("retired teacher", 38_000), ("retired nurse", 41_000),
                     ("retired engineer", 56_000), ("retired shop owner", 30_000),
                     ("retired civil servant", 47_000))

# Funding stories: what an incoming transfer says, the document that would evidence it and who
# sends it belong together (manual 5.2, 5.3, 11.9; docs/world.md, "Story model").

# (memo, the source-of-wealth document that evidences it, the payer's kind of firm)
PEP_FUNDING = (
    ("ESCROW CLOSING PROCEEDS", "property sale deed", "escrow"),
    ("ESTATE DISTRIBUTION", "grant of probate", "law"),
    ("SALE PROCEEDS", "share sale agreement", "plain"),
    ("DIVIDEND DISTRIBUTION", "dividend resolution", "plain"),
    ("LOAN ADVANCE", "loan agreement", "plain"),
    ("CONSULTANCY FEE", "consultancy agreement", "plain"),
    ("ADVISORY SERVICES", "consultancy agreement", "shell"),
)

# (memo, the document that evidences the funds, who sends them: a firm style or a person)
PROPERTY_FUNDING_PERSON = (
    ("SALE PROCEEDS", "property sale deed", "law"),
    ("GIFT", "gift letter", "relative"),
    ("INVESTMENT REDEMPTION", "investment statement", "plain"),
)

PROPERTY_FUNDING_COMPANY = (
    ("CAPITAL CONTRIBUTION", "capital contribution agreement", "member"),
    ("MEMBER LOAN", "member loan agreement", "member"),
    ("SALE PROCEEDS", "property sale deed", "law"),
)

# (incoming memo, the document that evidences it): a company's receipts, a person's windfalls
INFLOW_COMPANY = (("CONTRACT PAYMENT", "customer contract"),
                  ("REMITTANCE INV", "customer contract"), ("LOAN DRAWDOWN", "loan agreement"),
                  ("ADVISORY SERVICES", "advisory agreement"),
                  ("CONSULTANCY AGREEMENT", "consultancy agreement"))

INFLOW_PERSON = (("SALE PROCEEDS", "sale agreement"), ("LOAN DRAWDOWN", "loan agreement"),
                 ("INVESTMENT REDEMPTION", "investment statement"))

# (incoming memo, the agreement that evidences it); a person borrows, only a company is lent to
# by its shareholders, sweeps a group cash pool or takes in capital.
LOAN_IN_PERSON = (("LOAN DRAWDOWN", "loan agreement"), ("FACILITY ADVANCE", "loan agreement"))

LOAN_IN_COMPANY = LOAN_IN_PERSON + (
    ("SHAREHOLDER LOAN", "shareholder loan agreement"),
    ("CASH POOL RETURN", "cash pooling agreement"),
    ("CAPITAL CONTRIBUTION", "subscription agreement"))

# The statement that evidences dispersed receipts, per occupation or business.
FUNNEL_DOCS = {
    "online marketplace seller": "marketplace payout statement",
    "travelling sales representative": "commission statement",
    "rideshare driver": "business income statement", "event vendor": "business income statement",
    "student": "marketplace payout statement",
    "franchise operator, home services": "franchise sales report",
    "online marketplace retailer": "marketplace payout statement",
}
