//! PostgreSQL's `Default` set of time zone abbreviations
//! (`timezone_abbreviations`, src/timezone/tznames/Default): each fixed
//! abbreviation's offset east of UTC in seconds (`D`: a daylight-time one),
//! and the zone a dynamic one (whose meaning changed over time) is read in.

/// Fixed abbreviations: `name offset [D]`, one per entry.
const FIXED: &str = "
    acdt 37800 D; acsst 37800 D; acst 34200; act -18000; acwst 31500; adt -10800 D;
    aedt 39600 D; aesst 39600 D; aest 36000; aft 16200; akdt -28800 D; akst -32400;
    almst 25200 D; almt 21600; amt -14400; ast -14400; awsst 32400 D; awst 28800; azost 0 D;
    azot -3600; bdst 7200 D; bdt 21600; bnt 28800; bort 28800; bot -14400; bra -10800;
    brst -7200 D; brt -10800; bst 3600 D; btt 21600; cadt 37800 D; cast 34200; cct 28800;
    cdt -18000 D; cest 7200 D; cet 3600; cetdst 7200 D; chadt 49500 D; chast 45900; chut 36000;
    clst -10800 D; cot -18000; cst -21600; cxt 25200; ddut 36000; eat 10800; edt -14400 D;
    eest 10800 D; eet 7200; eetdst 10800 D; egst 0 D; egt -3600; est -18000; fet 10800;
    fjst 46800 D; fjt 43200; fnst -3600 D; fnt -7200; galt -21600; gamt -32400; gft -10800;
    gilt 43200; gmt 0; hkt 28800; hst -36000; ict 25200; idt 10800 D; irt 12600; ist 7200;
    jayt 32400; jst 32400; kdt 36000 D; kgst 21600 D; kst 32400; lhst 37800; ligt 36000;
    mart -34200; mdt -21600 D; mest 7200 D; mesz 7200 D; met 3600; metdst 7200 D; mez 3600;
    mht 43200; mmt 23400; mpt 36000; msd 14400 D; mst -25200; must 18000 D; mut 14400;
    mvt 18000; myt 28800; ndt -9000 D; nft -12600; npt 20700; nst -12600; nzdt 46800 D;
    nzst 43200; nzt 43200; pdt -25200 D; pet -18000; pgt 36000; pht 28800; pkst 21600 D;
    pkt 18000; pmdt -7200 D; pmst -10800; pont 39600; pst -28800; pwt 32400; pyst -10800 D;
    ret 14400; sadt 37800 D; sast 7200; sct 14400; taht -36000; tft 18000; tjt 18000; tot 46800;
    trut 36000; tvt 43200; uct 0; ulast 32400 D; ut 0; utc 0; uyst -7200 D; uyt -10800;
    uzst 21600 D; uzt 18000; vut 39600; wadt 28800 D; wakt 43200; wast 25200; wat 3600;
    wdt 32400 D; wet 0; wetdst 3600 D; wft 43200; wgst -7200 D; wgt -10800; xjt 21600;
    yapt 36000; yekst 21600 D; z 0; zulu 0;";

/// Dynamic abbreviations: `name zone`.
const DYNAMIC: &str = "
    amst Asia/Yerevan; anast Asia/Anadyr; anat Asia/Anadyr; arst America/Argentina/Buenos_Aires;
    art America/Argentina/Buenos_Aires; azst Asia/Baku; azt Asia/Baku; ckt Pacific/Rarotonga;
    clt America/Santiago; davt Antarctica/Davis; easst Pacific/Easter; east Pacific/Easter;
    fkst Atlantic/Stanley; fkt Atlantic/Stanley; gest Asia/Tbilisi; get Asia/Tbilisi;
    gyt America/Guyana; iot Indian/Chagos; irkst Asia/Irkutsk; irkt Asia/Irkutsk;
    kgt Asia/Bishkek; kost Pacific/Kosrae; krast Asia/Krasnoyarsk; krat Asia/Krasnoyarsk;
    lhdt Australia/Lord_Howe; lint Pacific/Kiritimati; lkt Asia/Colombo; magst Asia/Magadan;
    magt Asia/Magadan; mawt Antarctica/Mawson; msk Europe/Moscow; novst Asia/Novosibirsk;
    novt Asia/Novosibirsk; nut Pacific/Niue; omsst Asia/Omsk; omst Asia/Omsk;
    petst Asia/Kamchatka; pett Asia/Kamchatka; pyt America/Asuncion; sgt Asia/Singapore;
    tkt Pacific/Fakaofo; tmt Asia/Ashgabat; ulat Asia/Ulaanbaatar; vet America/Caracas;
    vlast Asia/Vladivostok; vlat Asia/Vladivostok; volt Europe/Volgograd; yakst Asia/Yakutsk;
    yakt Asia/Yakutsk; yekt Asia/Yekaterinburg;";

/// What an abbreviation means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Abbrev {
    /// Standard time at a fixed offset east of UTC, in seconds.
    Std(i32),
    /// Daylight time at a fixed offset east of UTC, in seconds.
    Dst(i32),
    /// The meaning the abbreviation had in this IANA zone at the time.
    Dynamic(&'static str),
}

/// `word` (lowercase, at most the length PostgreSQL keeps) as an
/// abbreviation of the `Default` set.
pub(super) fn abbrev(word: &str) -> Option<Abbrev> {
    let entry = |list: &'static str| {
        list.split(';')
            .map(str::trim)
            .find(|e| e.split(' ').next() == Some(word))
    };
    if let Some(e) = entry(FIXED) {
        let mut parts = e.split(' ').skip(1);
        let offset = parts.next()?.parse().ok()?;
        return Some(match parts.next() {
            Some("D") => Abbrev::Dst(offset),
            _ => Abbrev::Std(offset),
        });
    }
    entry(DYNAMIC)
        .and_then(|e| e.split(' ').nth(1))
        .map(Abbrev::Dynamic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_read_as_the_default_set() {
        assert_eq!(abbrev("pst"), Some(Abbrev::Std(-28800)));
        assert_eq!(abbrev("pdt"), Some(Abbrev::Dst(-25200)));
        assert_eq!(abbrev("utc"), Some(Abbrev::Std(0)));
        assert_eq!(abbrev("msk"), Some(Abbrev::Dynamic("Europe/Moscow")));
        assert_eq!(abbrev("ist"), Some(Abbrev::Std(7200)));
        assert_eq!(abbrev("xyz"), None);
        assert_eq!(abbrev("ps"), None);
    }
}
