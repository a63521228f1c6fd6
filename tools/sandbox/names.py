# ruff: noqa: E501  (fact tables: one city per line reads better than wrapped lists)
"""Name material for venues: real, well-known places of major cities, and generators for the rest.

The real lists are facts (famous landmarks, hotels and restaurants of those cities); generated
names combine Indian locality, person and word lists so that they read like real venues.
"""

from __future__ import annotations

import numpy as np

# city -> [(attraction, categories)] ; categories from the paper's Table 7. The tourist cities' famous
# attractions, with their fees, hours and closing days, are `utp_env.tools.india.FAMOUS_ATTRACTIONS`;
# these are the other well-known places (of those cities too), placed after them.
REAL_ATTRACTIONS: dict[str, list[tuple[str, list[str]]]] = {
    "Mumbai": [("Marine Drive", ["Sights & Landmarks", "Nature & Parks"]),
               ("Siddhivinayak Temple", ["Sights & Landmarks"]), ("Sanjay Gandhi National Park", ["Nature & Parks", "Outdoor Activities"]), ("Juhu Beach", ["Nature & Parks"]),
               ("Colaba Causeway", ["Shopping"]), ("Essel World", ["Water & Amusement Parks"])],
    "Delhi": [("Chandni Chowk", ["Shopping", "Food & Drink"]), ("Lodhi Garden", ["Nature & Parks"]),
              ("Dilli Haat", ["Shopping"]), ("National Zoological Park", ["Zoos & Aquariums"])],
    "Bengaluru": [("Visvesvaraya Industrial and Technological Museum", ["Museums"]),
                  ("ISKCON Temple Bangalore", ["Sights & Landmarks"]), ("Bannerghatta Biological Park", ["Zoos & Aquariums", "Nature & Parks"]),
                  ("Wonderla Bengaluru", ["Water & Amusement Parks"]), ("Commercial Street", ["Shopping"]), ("Bull Temple", ["Sights & Landmarks"])],
    "Hyderabad": [("Hussain Sagar Lake", ["Nature & Parks", "Boat Tours & Water Sports"]), ("Ramoji Film City", ["Fun & Games", "Concerts & Shows"]), ("Nehru Zoological Park", ["Zoos & Aquariums"]),
                  ("Birla Mandir", ["Sights & Landmarks"]), ("Laad Bazaar", ["Shopping"])],
    "Ahmedabad": [("Kankaria Lake", ["Nature & Parks", "Fun & Games"]),
                  ("Sabarmati Riverfront", ["Nature & Parks"]), ("Science City Ahmedabad", ["Museums", "Fun & Games"]),
                  ("Law Garden Night Market", ["Shopping"]), ("Hutheesing Jain Temple", ["Sights & Landmarks"])],
    "Chennai": [("Arignar Anna Zoological Park", ["Zoos & Aquariums"]),
                ("Elliot's Beach", ["Nature & Parks"]), ("T. Nagar Market", ["Shopping"]), ("Guindy National Park", ["Nature & Parks"])],
    "Kolkata": [("Science City Kolkata", ["Museums", "Fun & Games"]),
                ("Alipore Zoological Garden", ["Zoos & Aquariums"]), ("Eden Gardens", ["Sights & Landmarks"]), ("New Market Kolkata", ["Shopping"]),
                ("Prinsep Ghat", ["Sights & Landmarks", "Boat Tours & Water Sports"])],
    "Surat": [("Dumas Beach", ["Nature & Parks"]), ("Surat Castle", ["Sights & Landmarks"]), ("Sardar Patel Museum", ["Museums"]),
              ("Sarthana Nature Park", ["Zoos & Aquariums", "Nature & Parks"]), ("Gopi Talav", ["Nature & Parks"]), ("Dutch Garden", ["Nature & Parks"])],
    "Pune": [("Sinhagad Fort", ["Outdoor Activities", "Sights & Landmarks"]),
             ("Pataleshwar Cave Temple", ["Sights & Landmarks"]),
             ("Rajiv Gandhi Zoological Park", ["Zoos & Aquariums"]), ("Osho Teerth Park", ["Nature & Parks"]), ("Laxmi Road Market", ["Shopping"])],
    "Jaipur": [("Jal Mahal", ["Sights & Landmarks"]), ("Johari Bazaar", ["Shopping"]), ("Chokhi Dhani", ["Food & Drink", "Concerts & Shows"])],
    "Lucknow": [("Bara Imambara", ["Sights & Landmarks"]), ("Rumi Darwaza", ["Sights & Landmarks"]), ("Chota Imambara", ["Sights & Landmarks"]),
                ("Ambedkar Memorial Park", ["Nature & Parks", "Sights & Landmarks"]), ("Lucknow Zoo", ["Zoos & Aquariums"]),
                ("The Residency", ["Sights & Landmarks", "Museums"]), ("Hazratganj Market", ["Shopping"]), ("Janeshwar Mishra Park", ["Nature & Parks"])],
    "Kanpur": [("JK Temple", ["Sights & Landmarks"]), ("Allen Forest Zoo", ["Zoos & Aquariums"]), ("Moti Jheel", ["Nature & Parks"]),
               ("Kanpur Memorial Church", ["Sights & Landmarks"]), ("Phool Bagh", ["Nature & Parks"])],
    "Nagpur": [("Deekshabhoomi", ["Sights & Landmarks"]), ("Futala Lake", ["Nature & Parks"]), ("Ambazari Lake", ["Nature & Parks"]),
               ("Central Museum Nagpur", ["Museums"]), ("Sitabuldi Fort", ["Sights & Landmarks"]), ("Maharajbagh Zoo", ["Zoos & Aquariums"])],
    "Indore": [("Rajwada Palace", ["Sights & Landmarks"]), ("Lal Bagh Palace", ["Sights & Landmarks", "Museums"]), ("Sarafa Bazaar", ["Food & Drink", "Shopping"]),
               ("Khajrana Ganesh Temple", ["Sights & Landmarks"]), ("Kanch Mandir", ["Sights & Landmarks"]), ("Chhappan Dukan", ["Food & Drink"])],
    "Thane": [("Upvan Lake", ["Nature & Parks"]), ("Yeoor Hills", ["Outdoor Activities", "Nature & Parks"]), ("Masunda Lake", ["Nature & Parks", "Boat Tours & Water Sports"]),
              ("Tikuji-ni-Wadi", ["Water & Amusement Parks"]), ("Viviana Mall", ["Shopping"])],
    "Bhopal": [("Upper Lake", ["Nature & Parks", "Boat Tours & Water Sports"]), ("Taj-ul-Masajid", ["Sights & Landmarks"]),
               ("Van Vihar National Park", ["Zoos & Aquariums", "Nature & Parks"]), ("Bharat Bhavan", ["Museums", "Concerts & Shows"]),
               ("Tribal Museum Bhopal", ["Museums"]), ("Sanchi Stupa", ["Sights & Landmarks"])],
    "Visakhapatnam": [("RK Beach", ["Nature & Parks"]), ("INS Kursura Submarine Museum", ["Museums"]), ("Kailasagiri", ["Nature & Parks"]),
                      ("Borra Caves", ["Outdoor Activities"]), ("Indira Gandhi Zoological Park", ["Zoos & Aquariums"])],
    "Patna": [("Golghar", ["Sights & Landmarks"]), ("Bihar Museum", ["Museums"]), ("Takht Sri Patna Sahib", ["Sights & Landmarks"]),
              ("Sanjay Gandhi Biological Park", ["Zoos & Aquariums"]), ("Gandhi Maidan", ["Nature & Parks"])],
    "Vadodara": [("Laxmi Vilas Palace", ["Sights & Landmarks"]), ("Sayaji Baug", ["Nature & Parks", "Zoos & Aquariums"]),
                 ("Baroda Museum and Picture Gallery", ["Museums"]), ("EME Temple", ["Sights & Landmarks"]), ("Sursagar Lake", ["Nature & Parks"])],
    "Agra": [("Kinari Bazaar", ["Shopping"])],
}
REAL_HOTELS: dict[str, list[str]] = {
    "Mumbai": ["The Taj Mahal Palace", "The Oberoi Mumbai", "Trident Nariman Point", "ITC Maratha", "JW Marriott Mumbai Juhu", "The St. Regis Mumbai"],
    "Delhi": ["The Imperial New Delhi", "The Leela Palace New Delhi", "Taj Palace New Delhi", "ITC Maurya", "The Oberoi New Delhi", "The Lalit New Delhi"],
    "Bengaluru": ["The Leela Palace Bengaluru", "Taj West End", "ITC Gardenia", "The Oberoi Bengaluru", "JW Marriott Bengaluru"],
    "Hyderabad": ["Taj Falaknuma Palace", "ITC Kohenur", "Park Hyatt Hyderabad", "Taj Krishna", "Novotel Hyderabad Convention Centre"],
    "Ahmedabad": ["Hyatt Regency Ahmedabad", "The House of MG", "Courtyard by Marriott Ahmedabad", "Novotel Ahmedabad"],
    "Chennai": ["ITC Grand Chola", "Taj Coromandel", "The Leela Palace Chennai", "Taj Fisherman's Cove", "Hyatt Regency Chennai"],
    "Kolkata": ["The Oberoi Grand", "Taj Bengal", "ITC Sonar", "JW Marriott Kolkata", "The Lalit Great Eastern"],
    "Pune": ["JW Marriott Pune", "Conrad Pune", "The O Hotel", "Hyatt Regency Pune"],
    "Jaipur": ["Rambagh Palace", "The Oberoi Rajvilas", "ITC Rajputana", "Jai Mahal Palace", "Fairmont Jaipur"],
    "Lucknow": ["Taj Mahal Lucknow", "Hyatt Regency Lucknow", "Renaissance Lucknow", "Clarks Avadh"],
    "Agra": ["The Oberoi Amarvilas", "ITC Mughal", "Taj Hotel and Convention Centre Agra", "Crystal Sarovar Premiere"],
    "Indore": ["Sayaji Hotel Indore", "Radisson Blu Indore", "Marriott Indore"],
    "Bhopal": ["Jehan Numa Palace", "Taj Lakefront Bhopal", "Noor-Us-Sabah Palace"],
    "Nagpur": ["Radisson Blu Nagpur", "Le Meridien Nagpur", "The Pride Hotel Nagpur"],
    "Vadodara": ["WelcomHotel Vadodara", "Grand Mercure Vadodara Surya Palace"],
    "Surat": ["Taj Gateway Surat", "Le Meridien Surat"],
    "Visakhapatnam": ["Novotel Visakhapatnam Varun Beach", "The Park Visakhapatnam"],
    "Patna": ["Hotel Maurya Patna", "Lemon Tree Premier Patna"],
}
REAL_RESTAURANTS: dict[str, list[tuple[str, list[str]]]] = {
    "Mumbai": [("Leopold Cafe", ["Bar/Pub/Cafe"]), ("Britannia & Co.", ["Indian Subcontinent"]), ("Trishna", ["Seafood/Steak/Grill"]),
               ("Bademiya", ["Indian Subcontinent"]), ("Cafe Mondegar", ["Bar/Pub/Cafe"]), ("Gajalee", ["Seafood/Steak/Grill"]),
               ("Bastian", ["Seafood/Steak/Grill"]), ("Wasabi by Morimoto", ["Asian"])],
    "Delhi": [("Karim's", ["Indian Subcontinent"]), ("Bukhara", ["Indian Subcontinent"]), ("Indian Accent", ["International Fusion"]),
              ("Paranthe Wali Gali", ["Indian Subcontinent"]), ("Moti Mahal", ["Indian Subcontinent"]), ("Saravana Bhavan Connaught Place", ["Indian Subcontinent"]),
              ("United Coffee House", ["European"]), ("Big Chill Cafe", ["Bar/Pub/Cafe", "Pizza/Italian Specialties"])],
    "Bengaluru": [("Mavalli Tiffin Room", ["Indian Subcontinent"]), ("Vidyarthi Bhavan", ["Indian Subcontinent"]), ("Toit", ["Bar/Pub/Cafe"]),
                  ("Karavalli", ["Seafood/Steak/Grill"]), ("Koshy's", ["Bar/Pub/Cafe"]), ("CTR Malleshwaram", ["Indian Subcontinent"])],
    "Hyderabad": [("Paradise Biryani", ["Indian Subcontinent"]), ("Bawarchi", ["Indian Subcontinent"]), ("Shah Ghouse", ["Indian Subcontinent"]),
                  ("Nimrah Cafe", ["Bar/Pub/Cafe"]), ("Chutneys", ["Indian Subcontinent"]), ("Ohri's Jiva Imperia", ["Indian Subcontinent"])],
    "Ahmedabad": [("Agashiye", ["Indian Subcontinent"]), ("Manek Chowk Khau Gali", ["Indian Subcontinent"]), ("Gordhan Thal", ["Indian Subcontinent"]),
                  ("Vishalla", ["Indian Subcontinent"])],
    "Chennai": [("Murugan Idli Shop", ["Indian Subcontinent"]), ("Ratna Cafe", ["Indian Subcontinent"]), ("Dakshin", ["Indian Subcontinent"]),
                ("Peshawri", ["Indian Subcontinent"]), ("Saravana Bhavan T. Nagar", ["Indian Subcontinent"])],
    "Kolkata": [("Peter Cat", ["Seafood/Steak/Grill", "European"]), ("Flurys", ["Bar/Pub/Cafe", "European"]), ("Arsalan", ["Indian Subcontinent"]),
                ("Mocambo", ["European", "Seafood/Steak/Grill"]), ("6 Ballygunge Place", ["Indian Subcontinent"]), ("Bhojohori Manna", ["Indian Subcontinent"])],
    "Pune": [("Vaishali", ["Indian Subcontinent"]), ("Cafe Goodluck", ["Bar/Pub/Cafe"]), ("Shabree", ["Indian Subcontinent"]), ("Kayani Bakery", ["Bar/Pub/Cafe"])],
    "Jaipur": [("Laxmi Misthan Bhandar", ["Indian Subcontinent"]), ("Rawat Mishthan Bhandar", ["Indian Subcontinent"]),
               ("Suvarna Mahal", ["Indian Subcontinent"]), ("Peacock Rooftop Restaurant", ["International Fusion"])],
    "Lucknow": [("Tunday Kababi", ["Indian Subcontinent"]), ("Dastarkhwan", ["Indian Subcontinent"]), ("Royal Cafe", ["Bar/Pub/Cafe"])],
    "Agra": [("Pinch of Spice", ["Indian Subcontinent"]), ("Peshawri Agra", ["Indian Subcontinent"]), ("Joney's Place", ["Bar/Pub/Cafe"])],
    "Indore": [("Guru Kripa", ["Indian Subcontinent"]), ("Johny Hot Dog", ["American"])],
    "Nagpur": [("Haldiram's Nagpur", ["Indian Subcontinent"]), ("Barbeque Nation Nagpur", ["Seafood/Steak/Grill"])],
}

AREAS = ("Civil Lines", "MG Road", "Gandhi Nagar", "Nehru Nagar", "Rajendra Nagar", "Station Road", "Old City",
         "Cantonment", "Model Town", "Sadar Bazaar", "Ashok Nagar", "Indira Nagar", "Shastri Nagar", "Subhash Chowk",
         "Lake View", "Tilak Road", "Sarojini Nagar", "Patel Nagar", "Ram Nagar", "Azad Chowk", "Vivekananda Road",
         "Park Street", "Market Road", "Hill Road", "Ring Road", "Sector 12", "College Road", "Mall Road", "Fort Area",
         "Kamla Nagar", "Anand Vihar", "Jawahar Chowk", "Bus Stand Road", "Court Road", "Temple Street")
PERSONS = ("Gandhi", "Nehru", "Tagore", "Ambedkar", "Shivaji", "Vivekananda", "Sardar Patel", "Tilak", "Netaji",
           "Rani Lakshmibai", "Maharana Pratap", "Bhagat Singh", "Kalam", "Indira", "Rajiv", "Lal Bahadur")
DEITIES = ("Shiva", "Hanuman", "Ganesh", "Durga", "Krishna", "Jagannath", "Venkateswara", "Kali", "Sai Baba",
           "Lakshmi Narayan", "Ram", "Murugan", "Mahavir", "Saraswati", "Ambaji")
WORDS = ("Shree", "Sai", "Royal", "Golden", "Grand", "Maharaja", "Sagar", "Annapurna", "Krishna", "Ganga", "Kaveri",
         "Taj", "Sangam", "Amrit", "Anand", "Shanti", "Moti", "Heera", "Kohinoor", "Sunrise", "Lotus", "Silver Oak",
         "Green Park", "Blue Moon", "Surya", "Chandra", "Lakshmi", "Ashoka", "Vrindavan", "Madhuban", "Kailash",
         "Pearl", "Emerald", "Sapphire", "Orchid", "Tulsi", "Saffron", "Jasmine", "Banyan", "Peacock")
ATTRACTION_TEMPLATES: dict[str, tuple[str, ...]] = {
    "Boat Tours & Water Sports": ("{area} Boat Club", "{city} Lake Boating", "{word} Water Sports"),
    "Casinos & Gambling": ("Casino {word}", "{word} Gaming Lounge"),
    "Classes & Workshops": ("{city} Pottery Studio", "{word} Cooking Classes", "{area} Art Workshop"),
    "Concerts & Shows": ("{person} Auditorium", "{city} Light and Sound Show", "{word} Rangmanch"),
    "Food & Drink": ("{area} Food Street", "{city} Khau Galli", "{word} Spice Market"),
    "Fun & Games": ("{word} Fun World", "{area} Gaming Zone", "{city} Snow Park"),
    "Museums": ("{city} Museum", "{person} Memorial Museum", "{city} Heritage Museum", "{city} Science Centre"),
    "Nature & Parks": ("{person} Park", "{area} Lake", "{city} Botanical Garden", "{word} Udyan", "{city} Hills Viewpoint"),
    "Nightlife": ("{word} Lounge", "{area} Social", "{word} Brewpub"),
    "Outdoor Activities": ("{city} Trekking Trail", "{word} Adventure Park", "{area} Cycling Track"),
    "Shopping": ("{area} Market", "{word} Mall", "{city} Handloom Emporium", "{area} Bazaar"),
    "Sights & Landmarks": ("{deity} Temple", "{city} Fort", "{person} Memorial", "{area} Clock Tower", "{city} Jama Masjid",
                           "{deity} Mandir", "{city} Gate", "St. Mary's Church {city}"),
    "Spas & Wellness": ("{word} Ayurveda Spa", "{word} Wellness Centre", "{city} Yoga Shala"),
    "Water & Amusement Parks": ("{word} Water Park", "{word} Amusement Park"),
    "Zoos & Aquariums": ("{city} Zoo", "{city} Aquarium", "{person} Zoological Park"),
}
RESTAURANT_TEMPLATES: dict[str, tuple[str, ...]] = {
    "Indian Subcontinent": ("{word} Bhojanalaya", "Hotel {word}", "{word} Dhaba", "{word} Biryani House", "Udupi {word}",
                            "{word} Thali", "{word} Sweets", "{word} Mess"),
    "Bar/Pub/Cafe": ("Cafe {word}", "{word} Brew House", "The {word} Pub", "{word} Coffee House"),
    "Asian": ("{word} Wok", "Mainland {word}", "{word} Chinese Corner"),
    "Pizza/Italian Specialties": ("{word} Pizzeria", "La {word} Trattoria"),
    "Seafood/Steak/Grill": ("{word} Grill", "{word} Fish Curry House", "{word} Barbeque"),
    "International Fusion": ("The {word} Kitchen", "{word} Bistro"),
    "European": ("{word} Continental", "Cafe {word} Europa"),
    "American": ("{word} Burger Co.", "{word} Diner"),
    "Mediterranean/Middle Eastern": ("{word} Shawarma", "{word} Mezze House"),
    "Latin/South American": ("{word} Cantina", "{word} Tacos"),
    "Eastern European/Russian": ("{word} Samovar",),
    "African": ("{word} Safari Kitchen",),
}
HOTEL_TEMPLATES = ("Hotel {word}", "{word} Residency", "Hotel {word} Grand", "The {word} Inn", "{word} Palace",
                   "{word} Comforts", "{word} Regency", "{word} Homestay", "{word} Suites", "{word} Resort")


def fill(template: str, city: str, rng: np.random.Generator) -> str:
    """One generated name from a template, drawing its words with `rng`."""
    return template.format(
        city=city, area=AREAS[rng.integers(len(AREAS))], person=PERSONS[rng.integers(len(PERSONS))],
        deity=DEITIES[rng.integers(len(DEITIES))], word=WORDS[rng.integers(len(WORDS))],
    )


def unique_name(base: str, taken: set[str], rng: np.random.Generator) -> str:
    """`base`, or `base` with a locality suffix, unique (case-insensitively) within `taken`."""
    name = base
    while name.casefold() in taken:
        name = f"{base} {AREAS[rng.integers(len(AREAS))]}"
        if name.casefold() in taken:
            name = f"{base} {int(rng.integers(2, 99))}"
    taken.add(name.casefold())
    return name
