//! The words date/time input knows: PostgreSQL's keyword table
//! (`datetktbl`), the time zone abbreviations of its `Default` set, and
//! the names of the time zones it can load.

/// What a keyword means (PostgreSQL's token types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Word {
    Special(Special),
    Month(i32),
    /// `ad` (false) or `bc` (true).
    Era(bool),
    /// `at`, `on`: ignored.
    Ignore,
    /// `am` (false) or `pm` (true).
    Meridian(bool),
    /// A label for the next number (`y2001m02d04`, `j2451187`).
    Label(Label),
    /// A day of the week: checked against nothing.
    Weekday,
    /// `dst` after a zone abbreviation.
    DstModifier,
    /// `t` before an ISO time.
    IsoTime,
    /// A zone abbreviation with a fixed standard-time offset (`est`), in
    /// seconds east.
    ZoneStd(i32),
    /// A zone abbreviation with a fixed daylight-time offset (`edt`).
    ZoneDst(i32),
    /// A zone abbreviation whose offset has changed over time (`msk`):
    /// the zone it is read in.
    ZoneDynamic(&'static str),
}

/// The reserved words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Special {
    NegInfinity,
    Infinity,
    Epoch,
    Now,
    Today,
    Tomorrow,
    Yesterday,
    /// `allballs`: 00:00:00.
    Zulu,
}

/// Which part a labelled number sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Label {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Julian,
    /// The number after `t`: a run-together time.
    Time,
    /// Units PostgreSQL knows but no date input may label (`dow`, `doy`,
    /// `isodow`, `isoyear`).
    Unusable,
}

/// Keywords compare on their first ten characters.
const TOKMAXLEN: usize = 10;

fn truncated(word: &str) -> &str {
    word.get(..TOKMAXLEN).unwrap_or(word)
}

/// `word` (lowercase) in PostgreSQL's core keyword table.
pub(super) fn date_keyword(word: &str) -> Option<Word> {
    use Special::*;
    let w = match truncated(word) {
        "-infinity" => Word::Special(NegInfinity),
        "infinity" => Word::Special(Infinity),
        "epoch" => Word::Special(Epoch),
        "now" => Word::Special(Now),
        "today" => Word::Special(Today),
        "tomorrow" => Word::Special(Tomorrow),
        "yesterday" => Word::Special(Yesterday),
        "allballs" => Word::Special(Zulu),
        "ad" => Word::Era(false),
        "bc" => Word::Era(true),
        "am" => Word::Meridian(false),
        "pm" => Word::Meridian(true),
        "at" | "on" => Word::Ignore,
        "dst" => Word::DstModifier,
        "t" => Word::IsoTime,
        "y" => Word::Label(Label::Year),
        "m" => Word::Label(Label::Month),
        "d" => Word::Label(Label::Day),
        "h" => Word::Label(Label::Hour),
        "mm" => Word::Label(Label::Minute),
        "s" => Word::Label(Label::Second),
        "j" | "jd" | "julian" => Word::Label(Label::Julian),
        "dow" | "doy" | "isodow" | "isoyear" => Word::Label(Label::Unusable),
        "sun" | "sunday" | "mon" | "monday" | "tue" | "tues" | "tuesday" | "wed" | "wednesday"
        | "weds" | "thu" | "thur" | "thurs" | "thursday" | "fri" | "friday" | "sat"
        | "saturday" => Word::Weekday,
        other => return month_name(other).map(Word::Month),
    };
    Some(w)
}

fn month_name(word: &str) -> Option<i32> {
    Some(match word {
        "jan" | "january" => 1,
        "feb" | "february" => 2,
        "mar" | "march" => 3,
        "apr" | "april" => 4,
        "may" => 5,
        "jun" | "june" => 6,
        "jul" | "july" => 7,
        "aug" | "august" => 8,
        "sep" | "sept" | "september" => 9,
        "oct" | "october" => 10,
        "nov" | "november" => 11,
        "dec" | "december" => 12,
        _ => return None,
    })
}

/// Whether `word` is in the core keyword table (the split asks).
pub(super) fn is_date_keyword(word: &str) -> bool {
    date_keyword(word).is_some()
}

/// `word` (lowercase) as a zone abbreviation of PostgreSQL's `Default`
/// set (`timezone_abbreviations`).
pub(super) fn zone_abbrev(word: &str) -> Option<Word> {
    use super::zone_abbrevs::{abbrev, Abbrev};
    Some(match abbrev(truncated(word))? {
        Abbrev::Std(e) => Word::ZoneStd(e),
        Abbrev::Dst(e) => Word::ZoneDst(e),
        Abbrev::Dynamic(z) => Word::ZoneDynamic(z),
    })
}

/// Whether PostgreSQL can load a time zone named `name` (lowercase): a
/// zone of the IANA database, also under `posix/` or `right/`, or a
/// POSIX zone specification such as `est5edt` or `utc+3`.
pub(super) fn is_zone_name(name: &str) -> bool {
    let bare = name
        .strip_prefix("posix/")
        .or_else(|| name.strip_prefix("right/"))
        .filter(|b| !matches!(*b, "localtime" | "posixrules"))
        .unwrap_or(name);
    ZONE_NAMES.split_ascii_whitespace().any(|z| z == bare) || is_posix_zone(name)
}

/// A POSIX zone specification as PostgreSQL's `tzparse` accepts it:
/// `std offset [dst [offset] [,rule,rule]]`, where a name is anything up
/// to a digit, sign or comma (or anything in `<>`), an offset is hours up
/// to 167 with optional minutes and seconds, and a rule is `jN`, `N` or
/// `mM.W.D`, each with an optional `/time`.
fn is_posix_zone(spec: &str) -> bool {
    posix_zone_end(spec.as_bytes()).is_some()
}

fn posix_zone_end(b: &[u8]) -> Option<()> {
    let (i, _) = posix_name(b, 0)?;
    if i == b.len() {
        return None;
    }
    let i = posix_offset(b, i)?;
    if i == b.len() {
        return Some(());
    }
    let (mut i, dst_len) = posix_name(b, i)?;
    if dst_len == 0 {
        return None;
    }
    if i < b.len() && b[i] != b',' && b[i] != b';' {
        i = posix_offset(b, i)?;
    }
    if i == b.len() {
        return Some(());
    }
    if b[i] != b',' && b[i] != b';' {
        return None;
    }
    let i = posix_rule(b, i + 1)?;
    if b.get(i) != Some(&b',') {
        return None;
    }
    (posix_rule(b, i + 1)? == b.len()).then_some(())
}

/// A zone name from `start`: where it ends and its length.
fn posix_name(b: &[u8], start: usize) -> Option<(usize, usize)> {
    if b.get(start) == Some(&b'<') {
        let close = b[start + 1..].iter().position(|&c| c == b'>')? + start + 1;
        return Some((close + 1, close - start - 1));
    }
    let len = b[start..]
        .iter()
        .take_while(|&&c| !(c.is_ascii_digit() || matches!(c, b',' | b'-' | b'+')))
        .count();
    Some((start + len, len))
}

fn posix_num(b: &[u8], i: usize, min: u32, max: u32) -> Option<usize> {
    let mut n: u32 = 0;
    let mut j = i;
    while let Some(d) = b.get(j).filter(|c| c.is_ascii_digit()) {
        n = n * 10 + u32::from(d - b'0');
        if n > max {
            return None;
        }
        j += 1;
    }
    (j > i && n >= min).then_some(j)
}

fn posix_offset(b: &[u8], mut i: usize) -> Option<usize> {
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    i = posix_num(b, i, 0, 167)?;
    for max in [59, 60] {
        if b.get(i) != Some(&b':') {
            break;
        }
        i = posix_num(b, i + 1, 0, max)?;
    }
    Some(i)
}

fn posix_rule(b: &[u8], i: usize) -> Option<usize> {
    let mut i = match b.get(i)? {
        b'j' => posix_num(b, i + 1, 1, 365)?,
        b'm' => {
            let i = posix_num(b, i + 1, 1, 12)?;
            let i = posix_num(b, (b.get(i) == Some(&b'.')).then_some(i + 1)?, 1, 5)?;
            posix_num(b, (b.get(i) == Some(&b'.')).then_some(i + 1)?, 0, 6)?
        }
        c if c.is_ascii_digit() => posix_num(b, i, 0, 365)?,
        _ => return None,
    };
    if b.get(i) == Some(&b'/') {
        i = posix_offset(b, i + 1)?;
    }
    Some(i)
}

/// The zones of the IANA database PostgreSQL 15 loads (lowercase, as
/// `pg_timezone_names` lists them without the `posix/` copies).
const ZONE_NAMES: &str = "
    africa/abidjan africa/accra africa/addis_ababa africa/algiers africa/asmara africa/asmera
    africa/bamako africa/bangui africa/banjul africa/bissau africa/blantyre africa/brazzaville
    africa/bujumbura africa/cairo africa/casablanca africa/ceuta africa/conakry africa/dakar
    africa/dar_es_salaam africa/djibouti africa/douala africa/el_aaiun africa/freetown
    africa/gaborone africa/harare africa/johannesburg africa/juba africa/kampala
    africa/khartoum africa/kigali africa/kinshasa africa/lagos africa/libreville africa/lome
    africa/luanda africa/lubumbashi africa/lusaka africa/malabo africa/maputo africa/maseru
    africa/mbabane africa/mogadishu africa/monrovia africa/nairobi africa/ndjamena
    africa/niamey africa/nouakchott africa/ouagadougou africa/porto-novo africa/sao_tome
    africa/timbuktu africa/tripoli africa/tunis africa/windhoek america/adak america/anchorage
    america/anguilla america/antigua america/araguaina america/argentina/buenos_aires
    america/argentina/catamarca america/argentina/comodrivadavia america/argentina/cordoba
    america/argentina/jujuy america/argentina/la_rioja america/argentina/mendoza
    america/argentina/rio_gallegos america/argentina/salta america/argentina/san_juan
    america/argentina/san_luis america/argentina/tucuman america/argentina/ushuaia
    america/aruba america/asuncion america/atikokan america/atka america/bahia
    america/bahia_banderas america/barbados america/belem america/belize america/blanc-sablon
    america/boa_vista america/bogota america/boise america/buenos_aires america/cambridge_bay
    america/campo_grande america/cancun america/caracas america/catamarca america/cayenne
    america/cayman america/chicago america/chihuahua america/ciudad_juarez
    america/coral_harbour america/cordoba america/costa_rica america/coyhaique america/creston
    america/cuiaba america/curacao america/danmarkshavn america/dawson america/dawson_creek
    america/denver america/detroit america/dominica america/edmonton america/eirunepe
    america/el_salvador america/ensenada america/fort_nelson america/fort_wayne
    america/fortaleza america/glace_bay america/godthab america/goose_bay america/grand_turk
    america/grenada america/guadeloupe america/guatemala america/guayaquil america/guyana
    america/halifax america/havana america/hermosillo america/indiana/indianapolis
    america/indiana/knox america/indiana/marengo america/indiana/petersburg
    america/indiana/tell_city america/indiana/vevay america/indiana/vincennes
    america/indiana/winamac america/indianapolis america/inuvik america/iqaluit america/jamaica
    america/jujuy america/juneau america/kentucky/louisville america/kentucky/monticello
    america/knox_in america/kralendijk america/la_paz america/lima america/los_angeles
    america/louisville america/lower_princes america/maceio america/managua america/manaus
    america/marigot america/martinique america/matamoros america/mazatlan america/mendoza
    america/menominee america/merida america/metlakatla america/mexico_city america/miquelon
    america/moncton america/monterrey america/montevideo america/montreal america/montserrat
    america/nassau america/new_york america/nipigon america/nome america/noronha
    america/north_dakota/beulah america/north_dakota/center america/north_dakota/new_salem
    america/nuuk america/ojinaga america/panama america/pangnirtung america/paramaribo
    america/phoenix america/port-au-prince america/port_of_spain america/porto_acre
    america/porto_velho america/puerto_rico america/punta_arenas america/rainy_river
    america/rankin_inlet america/recife america/regina america/resolute america/rio_branco
    america/rosario america/santa_isabel america/santarem america/santiago
    america/santo_domingo america/sao_paulo america/scoresbysund america/shiprock america/sitka
    america/st_barthelemy america/st_johns america/st_kitts america/st_lucia america/st_thomas
    america/st_vincent america/swift_current america/tegucigalpa america/thule
    america/thunder_bay america/tijuana america/toronto america/tortola america/vancouver
    america/virgin america/whitehorse america/winnipeg america/yakutat america/yellowknife
    antarctica/casey antarctica/davis antarctica/dumontdurville antarctica/macquarie
    antarctica/mawson antarctica/mcmurdo antarctica/palmer antarctica/rothera
    antarctica/south_pole antarctica/syowa antarctica/troll antarctica/vostok
    arctic/longyearbyen asia/aden asia/almaty asia/amman asia/anadyr asia/aqtau asia/aqtobe
    asia/ashgabat asia/ashkhabad asia/atyrau asia/baghdad asia/bahrain asia/baku asia/bangkok
    asia/barnaul asia/beirut asia/bishkek asia/brunei asia/calcutta asia/chita asia/choibalsan
    asia/chongqing asia/chungking asia/colombo asia/dacca asia/damascus asia/dhaka asia/dili
    asia/dubai asia/dushanbe asia/famagusta asia/gaza asia/harbin asia/hebron asia/ho_chi_minh
    asia/hong_kong asia/hovd asia/irkutsk asia/istanbul asia/jakarta asia/jayapura
    asia/jerusalem asia/kabul asia/kamchatka asia/karachi asia/kashgar asia/kathmandu
    asia/katmandu asia/khandyga asia/kolkata asia/krasnoyarsk asia/kuala_lumpur asia/kuching
    asia/kuwait asia/macao asia/macau asia/magadan asia/makassar asia/manila asia/muscat
    asia/nicosia asia/novokuznetsk asia/novosibirsk asia/omsk asia/oral asia/phnom_penh
    asia/pontianak asia/pyongyang asia/qatar asia/qostanay asia/qyzylorda asia/rangoon
    asia/riyadh asia/saigon asia/sakhalin asia/samarkand asia/seoul asia/shanghai
    asia/singapore asia/srednekolymsk asia/taipei asia/tashkent asia/tbilisi asia/tehran
    asia/tel_aviv asia/thimbu asia/thimphu asia/tokyo asia/tomsk asia/ujung_pandang
    asia/ulaanbaatar asia/ulan_bator asia/urumqi asia/ust-nera asia/vientiane asia/vladivostok
    asia/yakutsk asia/yangon asia/yekaterinburg asia/yerevan atlantic/azores atlantic/bermuda
    atlantic/canary atlantic/cape_verde atlantic/faeroe atlantic/faroe atlantic/jan_mayen
    atlantic/madeira atlantic/reykjavik atlantic/south_georgia atlantic/st_helena
    atlantic/stanley australia/act australia/adelaide australia/brisbane australia/broken_hill
    australia/canberra australia/currie australia/darwin australia/eucla australia/hobart
    australia/lhi australia/lindeman australia/lord_howe australia/melbourne australia/north
    australia/nsw australia/perth australia/queensland australia/south australia/sydney
    australia/tasmania australia/victoria australia/west australia/yancowinna brazil/acre
    brazil/denoronha brazil/east brazil/west canada/atlantic canada/central canada/eastern
    canada/mountain canada/newfoundland canada/pacific canada/saskatchewan canada/yukon cet
    chile/continental chile/easterisland cst6cdt cuba eet egypt eire est est5edt etc/gmt
    etc/gmt+0 etc/gmt+1 etc/gmt+10 etc/gmt+11 etc/gmt+12 etc/gmt+2 etc/gmt+3 etc/gmt+4
    etc/gmt+5 etc/gmt+6 etc/gmt+7 etc/gmt+8 etc/gmt+9 etc/gmt-0 etc/gmt-1 etc/gmt-10 etc/gmt-11
    etc/gmt-12 etc/gmt-13 etc/gmt-14 etc/gmt-2 etc/gmt-3 etc/gmt-4 etc/gmt-5 etc/gmt-6
    etc/gmt-7 etc/gmt-8 etc/gmt-9 etc/gmt0 etc/greenwich etc/uct etc/universal etc/utc etc/zulu
    europe/amsterdam europe/andorra europe/astrakhan europe/athens europe/belfast
    europe/belgrade europe/berlin europe/bratislava europe/brussels europe/bucharest
    europe/budapest europe/busingen europe/chisinau europe/copenhagen europe/dublin
    europe/gibraltar europe/guernsey europe/helsinki europe/isle_of_man europe/istanbul
    europe/jersey europe/kaliningrad europe/kiev europe/kirov europe/kyiv europe/lisbon
    europe/ljubljana europe/london europe/luxembourg europe/madrid europe/malta
    europe/mariehamn europe/minsk europe/monaco europe/moscow europe/nicosia europe/oslo
    europe/paris europe/podgorica europe/prague europe/riga europe/rome europe/samara
    europe/san_marino europe/sarajevo europe/saratov europe/simferopol europe/skopje
    europe/sofia europe/stockholm europe/tallinn europe/tirane europe/tiraspol europe/ulyanovsk
    europe/uzhgorod europe/vaduz europe/vatican europe/vienna europe/vilnius europe/volgograd
    europe/warsaw europe/zagreb europe/zaporozhye europe/zurich factory gb gb-eire gmt gmt+0
    gmt-0 gmt0 greenwich hongkong hst iceland indian/antananarivo indian/chagos
    indian/christmas indian/cocos indian/comoro indian/kerguelen indian/mahe indian/maldives
    indian/mauritius indian/mayotte indian/reunion iran israel jamaica japan kwajalein libya
    localtime met mexico/bajanorte mexico/bajasur mexico/general mst mst7mdt navajo nz nz-chat
    pacific/apia pacific/auckland pacific/bougainville pacific/chatham pacific/chuuk
    pacific/easter pacific/efate pacific/enderbury pacific/fakaofo pacific/fiji
    pacific/funafuti pacific/galapagos pacific/gambier pacific/guadalcanal pacific/guam
    pacific/honolulu pacific/johnston pacific/kanton pacific/kiritimati pacific/kosrae
    pacific/kwajalein pacific/majuro pacific/marquesas pacific/midway pacific/nauru
    pacific/niue pacific/norfolk pacific/noumea pacific/pago_pago pacific/palau
    pacific/pitcairn pacific/pohnpei pacific/ponape pacific/port_moresby pacific/rarotonga
    pacific/saipan pacific/samoa pacific/tahiti pacific/tarawa pacific/tongatapu pacific/truk
    pacific/wake pacific/wallis pacific/yap poland portugal posixrules prc pst8pdt roc rok
    singapore turkey uct universal us/alaska us/aleutian us/arizona us/central us/east-indiana
    us/eastern us/hawaii us/indiana-starke us/michigan us/mountain us/pacific us/samoa utc w-su
    wet zulu";
