"""Name material for generated venues, by the language region of the city's state.

A generated venue is named as places of its region are: a Tamil tiffin room in Chennai ("Sri
Murugan Bhavan"), a Bengali sweet shop in Kolkata ("Ma Tara Mishtanna Bhandar"), a Gujarati nasta
house in Surat, a temple with its region's deities and naming ("Arulmigu Mariamman Temple",
"Hanuman Mandir", "Sri Anjaneya Temple"), a lake called as the region calls lakes (kere, cheruvu,
talav, dighi ...). Localities are the city's own (`utp_env.tools.india.venue_facts.localities`,
real neighbourhoods of the big and tourist cities) or, for other cities, the common locality names
of its region; numbered sectors only in planned cities (`venue_facts.SECTOR_CITIES`). These are
words to build names from, not facts: the real venues are in `utp_env/tools/india/`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The language region of each state and union territory (the sandbox's state names).
STATE_REGION: dict[str, str] = {
    "Tamil Nadu": "tamil", "Puducherry": "tamil", "Karnataka": "kannada", "Andhra Pradesh": "telugu",
    "Telangana": "telugu", "Kerala": "malayalam", "Maharashtra": "marathi", "Goa": "konkani", "Gujarat": "gujarati",
    "Dadra and Nagar Haveli and Daman and Diu": "gujarati", "West Bengal": "bengali", "Tripura": "bengali",
    "Odisha": "odia", "Assam": "assamese", "Punjab": "punjabi", "Chandigarh": "punjabi", "Rajasthan": "rajasthani",
    "Jammu and Kashmir": "kashmiri", "Ladakh": "himalayan", "Sikkim": "himalayan", "Arunachal Pradesh": "northeast",
    "Meghalaya": "northeast", "Nagaland": "northeast", "Mizoram": "northeast", "Manipur": "northeast",
    "Himachal Pradesh": "pahari", "Uttarakhand": "pahari",
}
DEFAULT_REGION = "hindi"  # Delhi, Haryana, Uttar Pradesh, Bihar, Jharkhand, Madhya Pradesh, Chhattisgarh


@dataclass(frozen=True)
class Region:
    """Words a region names its places with."""

    words: tuple[str, ...]  # first words of restaurant and hotel names
    persons: tuple[str, ...]  # people parks, halls and stadiums are named after
    deities: tuple[str, ...]
    temple: tuple[str, ...]  # temple name patterns ({deity}, {locality})
    localities: tuple[str, ...]  # common locality names of the region's towns
    lake: str  # how a lake is named ({word})
    park: str
    food_street: str
    sweet_shop: str
    tiffin: tuple[str, ...]  # a breakfast-and-snacks place of the region (a "tiffin" kind)
    meals: str  # a lunch-and-dinner meals place of the region
    stage: str  # an auditorium


PAN_INDIAN_LOCALITIES = ("Station Road", "Bus Stand Road", "Main Road", "Gandhi Nagar", "Nehru Nagar", "Old Town",
                         "Market Road", "Court Road", "College Road", "Hospital Road")

REGIONS: dict[str, Region] = {
    "hindi": Region(
        words=("Shree", "Annapurna", "Ganga", "Yamuna", "Moti", "Heera", "Gulab", "Kesar", "Chandni", "Shanti",
               "Anand", "Krishna", "Vrindavan", "Sagarika", "Maharaja", "Kailash", "Madhuban", "Sangam", "Amrit",
               "Ashoka"),
        persons=("Gandhi", "Nehru", "Subhash", "Azad", "Bhagat Singh", "Rajendra Prasad", "Lal Bahadur Shastri",
                 "Ambedkar", "Indira Gandhi", "Deendayal"),
        deities=("Hanuman", "Shiv", "Ram", "Durga", "Radha Krishna", "Sai Baba", "Kali", "Lakshmi Narayan"),
        temple=("{deity} Mandir", "Shri {deity} Mandir", "{deity} Mandir {locality}"),
        localities=("Sadar Bazaar", "Civil Lines", "Ram Nagar", "Shastri Nagar", "Subhash Nagar", "Kotwali Chowk",
                    "Ghanta Ghar", "Naya Bazaar", "Gandhi Chowk", "Rajendra Nagar", "Azad Nagar", "Tilak Nagar",
                    "Kutchery Road"),
        lake="{word} Sagar", park="{person} Park", food_street="{locality} Chaat Gali",
        sweet_shop="{word} Mishthan Bhandar", tiffin=("{word} Nashta Kendra",), meals="{word} Bhojanalaya",
        stage="{person} Sabhagar"),
    "rajasthani": Region(
        words=("Marwar", "Mewar", "Shekhawati", "Rajputana", "Padmini", "Moomal", "Kesar", "Laxmi", "Ghoomar",
               "Dhola Maru", "Rajwada", "Chandni", "Heera", "Shree"),
        persons=("Maharana Pratap", "Gandhi", "Nehru", "Sawai Man Singh", "Subhash", "Ambedkar", "Indira Gandhi"),
        deities=("Hanuman", "Shiv", "Ganesh", "Karni Mata", "Krishna", "Ram", "Durga"),
        temple=("{deity} Mandir", "Shri {deity} Mandir"),
        localities=("Sadar Bazaar", "Civil Lines", "Station Road", "Ghanta Ghar", "Gandhi Chowk", "Shastri Nagar",
                    "Subhash Nagar", "Purana Shahar", "Kotwali Chowk", "Tilak Nagar"),
        lake="{word} Talab", park="{person} Park", food_street="{locality} Chaat Gali",
        sweet_shop="{word} Mishthan Bhandar", tiffin=("{word} Nashta Kendra",), meals="{word} Thali",
        stage="{person} Rangmanch"),
    "punjabi": Region(
        words=("Punjab", "Amritsari", "Pind", "Kesar", "Sher-e-Punjab", "Makhan", "Sodhi", "Bhatia", "Gill",
               "Sandhu", "Lahori", "Heer", "Shahi"),
        persons=("Bhagat Singh", "Lala Lajpat Rai", "Guru Nanak", "Udham Singh", "Gandhi", "Nehru"),
        deities=("Durga", "Shiv", "Hanuman", "Ram", "Krishna"),
        temple=("{deity} Mandir", "Gurudwara Singh Sabha {locality}"),
        localities=("Model Town", "Mall Road", "Civil Lines", "GT Road", "Sadar Bazaar", "Guru Nanak Nagar",
                    "Ranjit Nagar", "Kutchery Road", "Railway Road"),
        lake="{word} Sarovar", park="{person} Park", food_street="{locality} Food Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Nashta Kendra",), meals="{word} Bhojanalaya",
        stage="{person} Auditorium"),
    "marathi": Region(
        words=("Shivneri", "Sahyadri", "Kolhapuri", "Malvani", "Dhanashree", "Prakash", "Shrikrishna", "Gajanan",
               "Vitthal", "Bhagyashree", "Samarth", "Ganesh", "Sai", "Tulsi"),
        persons=("Shivaji", "Tilak", "Phule", "Ambedkar", "Savarkar", "Yashwantrao Chavan", "Sane Guruji"),
        deities=("Ganpati", "Vitthal", "Khandoba", "Mahalaxmi", "Maruti", "Sai Baba", "Tulja Bhavani"),
        temple=("{deity} Mandir", "Shri {deity} Mandir"),
        localities=("Shivaji Nagar", "Sadashiv Peth", "Budhwar Peth", "Tilak Road", "Station Road", "Camp",
                    "Gandhi Chowk", "Ganesh Nagar", "Samarth Nagar", "Raviwar Peth", "Shivaji Chowk",
                    "Mahatma Phule Road"),
        lake="{word} Talao", park="{person} Udyan", food_street="{locality} Khau Galli",
        sweet_shop="{word} Sweets", tiffin=("Udupi {word}",), meals="{word} Khanaval",
        stage="{person} Natyagruha"),
    "gujarati": Region(
        words=("Swati", "Rajwadu", "Gopi", "Shreeji", "Jalaram", "Ambica", "Sardar", "Dwarkesh", "Kathiyawadi",
               "Khodiyar", "Umiya", "Sahajanand", "Mahalaxmi", "Navrang"),
        persons=("Sardar Patel", "Gandhi", "Vikram Sarabhai", "Narmad", "Jhaverchand Meghani", "Ambedkar"),
        deities=("Ambaji", "Swaminarayan", "Jalaram", "Dwarkadhish", "Hanuman", "Khodiyar Ma"),
        temple=("{deity} Mandir", "Shri {deity} Mandir"),
        localities=("Sardar Nagar", "Gandhi Road", "Tower Chowk", "Station Road", "Panchvati", "Sardar Patel Road",
                    "Jawahar Road", "Patel Colony", "Bhid Bhanjan Road"),
        lake="{word} Talav", park="{person} Baug", food_street="{locality} Khau Gali",
        sweet_shop="{word} Sweet Mart", tiffin=("{word} Nashta Kendra",), meals="{word} Thali",
        stage="{person} Town Hall"),
    "konkani": Region(
        words=("Mandovi", "Zuari", "Konkan", "Goenchi", "Sao Joao", "Fernandes", "D'Souza", "Rodrigues", "Mascarenhas",
               "Pereira", "Kamat", "Naik"),
        persons=("Dayanand Bandodkar", "Gandhi", "Ram Manohar Lohia", "Jack de Sequeira", "Nehru"),
        deities=("Shantadurga", "Mangeshi", "Ganesh", "Mahalasa", "Ravalnath"),
        temple=("Shri {deity} Temple", "{deity} Temple"),
        localities=("Municipal Market", "Church Square", "Station Road", "Beach Road", "Market Road", "Main Road"),
        lake="{word} Lake", park="{person} Garden", food_street="{locality} Food Street",
        sweet_shop="{word} Sweets", tiffin=("Udupi {word}",), meals="{word} Fish Thali",
        stage="{person} Ravindra Bhavan"),
    "kannada": Region(
        words=("Sri Krishna", "Sri Sai", "Raghavendra", "Mayura", "Chalukya", "Hoysala", "Kaveri", "Tunga",
               "Sharavathi", "Malnad", "Nandi", "Ganesh", "Annapoorna", "Vinayaka"),
        persons=("Kuvempu", "Basaveshwara", "Visvesvaraya", "Rajkumar", "Kempegowda", "Kittur Rani Chennamma"),
        deities=("Ganapathi", "Anjaneya", "Chamundeshwari", "Venkataramana", "Basavanna", "Subramanya"),
        temple=("Sri {deity} Temple", "Sri {deity} Swamy Temple"),
        localities=("KR Circle", "Car Street", "Vidyanagar", "Saraswathipuram", "Basaveshwara Nagar", "Hosa Badavane",
                    "Old Bus Stand", "Rajkumar Road", "Kuvempu Nagar", "Vinoba Nagar", "MG Road"),
        lake="{word} Kere", park="{person} Park", food_street="{locality} Eat Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Darshini", "Udupi {word}", "{word} Tiffin Room"),
        meals="{word} Military Hotel", stage="{person} Kalamandira"),
    "tamil": Region(
        words=("Murugan", "Meenakshi", "Ponni", "Kaveri", "Pandian", "Kongu", "Chettinad", "Karaikudi", "Ayyanar",
               "Ganesa", "Annapoorna", "Sangeetha", "Amman", "Thirumalai"),
        persons=("Periyar", "Kamarajar", "Anna", "Bharathiyar", "Thiruvalluvar", "VOC", "Rajaji"),
        deities=("Murugan", "Mariamman", "Vinayagar", "Perumal", "Ayyappan", "Kamakshi", "Angalamman"),
        temple=("Arulmigu {deity} Temple", "{deity} Kovil", "Sri {deity} Temple"),
        localities=("Anna Nagar", "Gandhi Road", "Periyar Nagar", "Kamarajar Salai", "Big Bazaar Street",
                    "South Car Street", "Bharathi Nagar", "KK Nagar", "Nehru Street", "East Main Street",
                    "Bazaar Street"),
        lake="{word} Eri", park="{person} Park", food_street="{locality} Food Street",
        sweet_shop="Sri {word} Sweets", tiffin=("Sri {word} Bhavan", "{word} Tiffin Centre", "Hotel {word} Bhavan"),
        meals="{word} Mess", stage="{person} Kalaiarangam"),
    "telugu": Region(
        words=("Godavari", "Krishna", "Rayalaseema", "Kakatiya", "Vijaya", "Venkateswara", "Balaji", "Annapurna",
               "Ruchi", "Gongura", "Vantillu", "Lakshmi", "Amaravati", "Srinivasa"),
        persons=("NTR", "Potti Sriramulu", "Alluri Sitarama Raju", "Gandhi", "Ambedkar", "Tanguturi Prakasam"),
        deities=("Venkateswara", "Kanaka Durga", "Anjaneya", "Sai Baba", "Shiva", "Rama"),
        temple=("Sri {deity} Swamy Temple", "Sri {deity} Temple"),
        localities=("Gandhi Nagar", "Kothapet", "Ramnagar", "Balaji Nagar", "Vidya Nagar", "Ashok Nagar",
                    "Lakshmipuram", "Main Road", "Station Road", "Brodipet"),
        lake="{word} Cheruvu", park="{person} Park", food_street="{locality} Food Court",
        sweet_shop="Sri {word} Sweets", tiffin=("Sri {word} Tiffins", "{word} Tiffin Centre"),
        meals="{word} Bhojanam", stage="{person} Kalakshetram"),
    "malayalam": Region(
        words=("Malabar", "Kovalam", "Kairali", "Periyar", "Sabari", "Kuttanad", "Thalassery", "Rahmath", "Nadan",
               "Kerala", "Ananthapuri", "Sreepadmam", "Aryas"),
        persons=("Sree Narayana Guru", "Kumaran Asan", "Swathi Thirunal", "Gandhi", "Nehru", "Chattampi Swamikal"),
        deities=("Ayyappa", "Bhagavathy", "Krishna", "Subramanya", "Shiva", "Ganapathy"),
        temple=("{locality} Sree {deity} Temple", "Sree {deity} Temple"),
        localities=("Market Junction", "Temple Road", "Beach Road", "Kovilakam Road", "Church Road",
                    "Collectorate Junction", "Bus Stand Junction", "Palace Road", "Convent Junction"),
        lake="{word} Kayal", park="{person} Park", food_street="{locality} Thattukada Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Tea Shop", "{word} Puttu House"),
        meals="{word} Meals", stage="{person} Town Hall"),
    "bengali": Region(
        words=("Rupali", "Sonali", "Padma", "Teesta", "Ganga", "Anandamoyee", "Ma Tara", "Basanta", "Nabanna",
               "Shantiniketan", "Kalyani", "Shorshe", "Jagannath", "Annapurna"),
        persons=("Rabindra", "Netaji", "Vivekananda", "Bidhan Chandra", "Sarat Chandra", "Nazrul", "Bankim"),
        deities=("Kali", "Durga", "Shiv", "Radha Govinda", "Lokenath", "Tarapith"),
        temple=("{deity} Mandir", "{locality} Kali Bari"),
        localities=("Bazar Para", "College Para", "Station Road", "Rabindra Sarani", "Netaji Subhas Road",
                    "Kali Bari Road", "Hospital More", "Rishi Aurobindo Sarani", "Thana More"),
        lake="{word} Dighi", park="{person} Udyan", food_street="{locality} Khabar Gali",
        sweet_shop="{word} Mishtanna Bhandar", tiffin=("{word} Cabin",),
        meals="{word} Pice Hotel", stage="{person} Bhavan"),
    "odia": Region(
        words=("Jagannath", "Utkal", "Kalinga", "Konark", "Mahanadi", "Chilika", "Maa Tarini", "Santosh", "Ananta",
               "Dalma", "Pahala", "Neelachal"),
        persons=("Biju Patnaik", "Madhusudan Das", "Gopabandhu", "Fakir Mohan", "Gandhi", "Netaji"),
        deities=("Jagannath", "Tarini", "Shiv", "Durga", "Hanuman", "Mangala"),
        temple=("Maa {deity} Temple", "{deity} Temple"),
        localities=("Station Square", "Gandhi Chowk", "Bazar Sahi", "Medical Square", "Main Road", "College Square",
                    "Sahid Nagar", "Bus Stand Road"),
        lake="{word} Pokhari", park="{person} Park", food_street="{locality} Food Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Tiffin Centre",),
        meals="{word} Bhojan Griha", stage="{person} Mandap"),
    "assamese": Region(
        words=("Luit", "Xorai", "Jonaki", "Rongali", "Brahmaputra", "Kamrup", "Manas", "Pragjyoti", "Kaziranga",
               "Bihu", "Majuli"),
        persons=("Srimanta Sankardev", "Lachit Borphukan", "Bhupen Hazarika", "Gopinath Bordoloi", "Jyoti Prasad"),
        deities=("Shiv", "Durga", "Kamakhya", "Hanuman", "Radha Krishna"),
        temple=("{deity} Mandir", "{locality} Namghar"),
        localities=("Paltan Bazaar", "Main Road", "Bazar Road", "Church Road", "Circuit House Road", "Station Road",
                    "Nayabazar", "AT Road"),
        lake="{word} Beel", park="{person} Park", food_street="{locality} Food Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Tea Stall", "{word} Tiffin House"), meals="{word} Assamese Thali",
        stage="{person} Kalakshetra"),
    "northeast": Region(
        words=("Pine", "Highland", "Orchid", "Hill View", "Lakeview", "Dzukou", "Loktak", "Sangai", "Tawang",
               "Misty", "Cloud", "Bamboo"),
        persons=("U Tirot Sing", "Rani Gaidinliu", "Gandhi", "Nehru", "Netaji", "Ambedkar"),
        deities=("Shiv", "Durga", "Krishna"),
        temple=("{deity} Mandir",),
        localities=("Police Bazar", "Main Road", "Bazar Road", "Church Road", "Circuit House Road", "Upper Bazar",
                    "Lower Bazar", "Secretariat Road"),
        lake="{word} Lake", park="{person} Park", food_street="{locality} Food Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Tiffin House",), meals="{word} Eatery",
        stage="{person} Hall"),
    "himalayan": Region(
        words=("Tashi", "Dolma", "Norling", "Shambhala", "Snow Lion", "Himalaya", "Lhasa", "Yak", "Kailash",
               "Tashi Delek", "Kanchenjunga", "Rinchen"),
        persons=("Gandhi", "Nehru", "Netaji", "Palden Thondup Namgyal"),
        deities=("Shiv", "Hanuman", "Durga"),
        temple=("{deity} Mandir",),
        localities=("Main Bazaar", "Old Town", "Upper Market", "Lower Market", "Fort Road", "Tibet Road",
                    "Development Area"),
        lake="{word} Lake", park="{person} Park", food_street="{locality} Food Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Tiffin House",), meals="{word} Eatery",
        stage="{person} Hall"),
    "pahari": Region(
        words=("Deodar", "Himalaya", "Shivalik", "Kailash", "Snow View", "Pine", "Devbhoomi", "Alaknanda",
               "Bhagirathi", "Garhwal", "Kumaon", "Dhauladhar", "Kinnaur"),
        persons=("Gandhi", "Nehru", "Subhash", "Govind Ballabh Pant", "YS Parmar", "Sridev Suman"),
        deities=("Shiv", "Hanuman", "Durga", "Naina Devi", "Jakhu", "Nag Devta"),
        temple=("{deity} Mandir", "Shri {deity} Mandir"),
        localities=("Mall Road", "Lower Bazaar", "Old Town", "Bus Stand", "Circular Road", "Kutchery",
                    "Upper Bazaar", "Tibetan Market"),
        lake="{word} Tal", park="{person} Park", food_street="{locality} Food Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Nashta Kendra",), meals="{word} Bhojanalaya",
        stage="{person} Auditorium"),
    "kashmiri": Region(
        words=("Chinar", "Jhelum", "Zabarwan", "Noor", "Shahi", "Mughal", "Wular", "Kehwa", "Nigeen", "Gulmarg",
               "Shalimar", "Dal"),
        persons=("Gandhi", "Nehru", "Sheikh Noor-ud-Din", "Lalla Ded", "Habba Khatoon"),
        deities=("Shiv", "Durga", "Hanuman"),
        temple=("{deity} Mandir", "Jamia Masjid {locality}"),
        localities=("Residency Road", "Main Bazaar", "Boulevard", "Court Road", "Main Chowk", "Bus Stand",
                    "Hospital Road"),
        lake="{word} Lake", park="{person} Park", food_street="{locality} Food Street",
        sweet_shop="{word} Sweets", tiffin=("{word} Tiffin House",), meals="{word} Wazwan",
        stage="{person} Hall"),
}
SAINTS = ("Mary", "Joseph", "Thomas", "Francis Xavier", "Anthony", "Paul", "Andrew", "Michael")
SURNAMES_BY_REGION: dict[str, tuple[str, ...]] = {
    "hindi": ("Agarwal", "Gupta", "Sharma", "Bansal", "Mittal", "Jain"),
    "rajasthani": ("Agarwal", "Maheshwari", "Jain", "Rathore", "Bhati"),
    "punjabi": ("Bhatia", "Sodhi", "Arora", "Kapoor", "Khanna"),
    "bengali": ("Ghosh", "Sen", "Das", "Mullick", "Basu"),
    "gujarati": ("Patel", "Shah", "Desai", "Mehta", "Joshi"),
    "marathi": ("Joshi", "Kulkarni", "Deshpande", "Patil", "Chitale"),
    "konkani": ("Fernandes", "D'Souza", "Rodrigues", "Pereira", "Gomes"),
}
# Iranian place names for the Irani cafes of Mumbai, Pune and Hyderabad.
IRANI_WORDS = ("Yazd", "Shiraz", "Khorasan", "Isfahan", "Tehran", "Persia", "Kerman")


def region_of(state: str) -> Region:
    """The name material of `state`'s language region."""
    return REGIONS[STATE_REGION.get(state, DEFAULT_REGION)]


def region_key(state: str) -> str:
    """The key of `state`'s language region in `REGIONS`."""
    return STATE_REGION.get(state, DEFAULT_REGION)


def city_localities(city: str, state: str) -> tuple[str, ...]:
    """The localities generated names and stops of `city` use: its own real ones where listed
    (`venue_facts.localities`), else a planned city's numbered sectors (`venue_facts.SECTOR_CITIES`),
    else its region's common ones and the pan-Indian ones."""
    from utp_env.tools.india.venue_facts import SECTOR_CITIES, localities

    own = localities().get(city)
    if own:
        return own
    if city in SECTOR_CITIES:
        return tuple(f"Sector {n}" for n in range(1, 41))
    return region_of(state).localities + PAN_INDIAN_LOCALITIES


def fill(template: str, city: str, state: str, rng: np.random.Generator,
         places: tuple[str, ...] | None = None) -> str:
    """One generated name from a template ({city}, {word}, {person}, {deity}, {locality}, {saint},
    {surname}, {irani}, {temple}), the words drawn from the city's region with `rng` and the
    locality from `places` (default: `city_localities`). Every placeholder draws once in a fixed
    order, whichever the template uses, so that names after it do not depend on the template."""
    region = region_of(state)
    places = places or city_localities(city, state)
    surnames = SURNAMES_BY_REGION.get(region_key(state), SURNAMES_BY_REGION["hindi"])
    picks = rng.integers(0, 1 << 30, 9)
    values = {
        "city": city,
        "word": region.words[picks[0] % len(region.words)],
        "person": region.persons[picks[1] % len(region.persons)],
        "deity": region.deities[picks[2] % len(region.deities)],
        "locality": places[picks[3] % len(places)],
        "saint": SAINTS[picks[4] % len(SAINTS)],
        "surname": surnames[picks[5] % len(surnames)],
        "irani": IRANI_WORDS[picks[6] % len(IRANI_WORDS)],
    }
    values["temple"] = region.temple[picks[7] % len(region.temple)].format(**values)
    return template.format(**values)


def unique_name(base: str, city: str, state: str, taken: set[str], rng: np.random.Generator,
                places: tuple[str, ...] | None = None) -> str:
    """`base`, or `base` with a locality of the city (from `places`, default `city_localities`),
    unique (case-insensitively) within `taken`."""
    places = places or city_localities(city, state)
    name = base
    tries = 0
    while name.casefold() in taken:
        tries += 1
        place = places[int(rng.integers(len(places)))]
        name = f"{base} {place}" if tries < 8 and place.casefold() not in base.casefold() else f"{base} {tries}"
    taken.add(name.casefold())
    return name
