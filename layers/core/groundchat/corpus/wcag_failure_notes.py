"""How people describe a failure of each WCAG 2.2 success criterion, in their own words.

Users type symptoms ("once I tab into the video player I can't get out", "the close X is tiny");
WCAG and Understanding WCAG name the requirement ("keyboard trap", "target size"). One line per
criterion lists the symptoms, widgets and situations people report, within that criterion's scope
and saying what sets it apart from its neighbours. Written from the criteria's texts and how they
fail in practice, blind to every question set; never shown or cited, only searched (the keyword
heading and the embedding text of the criterion's passages, corpus/index_text.py).
"""
from __future__ import annotations

FAILURE_NOTES: dict[str, str] = {
    "1.1.1": "images, icons, logos, charts or image buttons with no alt text, empty alt on a meaningful "
             "picture, or alt like image123.jpg; screen reader just says graphic or unlabelled button; captcha "
             "with no other way; decorative images read aloud",
    "1.2.1": "a podcast, voice memo or audio clip with no transcript, or a silent animation, product demo or "
             "screen recording with no text or audio version; deaf users miss the recording and blind users "
             "can't tell what the mute video shows",
    "1.2.2": "a recorded video, webinar replay, YouTube embed or marketing clip has no subtitles, only "
             "auto-generated captions full of mistakes, or captions that skip speaker names and sound effects; "
             "deaf or hard of hearing viewers can't follow the dialogue",
    "1.2.3": "a prerecorded video shows on-screen text, actions or charts that nobody says out loud and there "
             "is no described version or full text transcript; blind viewers hear music or silence and miss "
             "what happens (level A, either option allowed)",
    "1.2.4": "a live stream, webinar, town hall, live event broadcast or online lecture happening in real time "
             "has no live subtitles or CART captioning; deaf attendees can't follow the speakers as it "
             "happens, unlike recorded video captions",
    "1.2.5": "a recorded video at level AA needs a narrated described track, a transcript alone no longer "
             "covers it; visual-only scenes, on-screen text, gestures or demo steps are not voiced so blind "
             "viewers lose the plot or the instructions",
    "1.2.6": "deaf users whose first language is signed ask for a BSL, ASL or other sign interpreter window on "
             "recorded videos because captions in written language are hard for them; AAA, recorded media only",
    "1.2.7": "the video talks nonstop, so there are no gaps to fit a narration of the visuals; asks whether "
             "the player should pause the video to describe what is shown, an extended or pausing described "
             "version for blind viewers, AAA",
    "1.2.8": "a full text script or transcript covering both dialogue and visual action for every recorded "
             "video with sound, and for silent clips too, so deafblind users reading braille get everything; "
             "AAA, beyond captions and narration",
    "1.2.9": "a live radio show, audio-only stream, phone-in broadcast or live podcast has no real-time text, "
             "no live transcript or prepared script; deaf listeners get nothing while it airs, AAA level",
    "1.3.1": "headings that are just bold big text, lists made with dashes, layout tables or data tables "
             "without header cells, form labels not tied to inputs, radio groups without fieldset or legend; "
             "screen reader can't jump by heading or hear table headers",
    "1.3.2": "screen reader or tab order reads content in a jumbled order because CSS floats, grid or absolute "
             "positioning reorder what's shown; columns read across instead of down; a price read before its "
             "product, instructions out of sequence",
    "1.3.3": "instructions like click the round green button, see the sidebar on the right, the menu below, or "
             "wait for the beep; blind users and people who can't hear can't follow directions that only point "
             "to shape, place or sound",
    "1.3.4": "the app or site only works in portrait or forces landscape, shows a please rotate your device "
             "message, or locks screen rotation; users with a tablet mounted on a wheelchair can't turn the "
             "phone to use it",
    "1.3.5": "form fields for name, email, phone, address, birthday or credit card lack the right autocomplete "
             "attribute, so the browser or password manager can't autofill them; people with memory or motor "
             "difficulties must retype personal details",
    "1.3.6": "asks at AAA how to mark up the purpose of buttons, icons and page regions so tools can swap in "
             "familiar symbols or hide clutter for people with cognitive disabilities, landmarks for "
             "navigation, personalization semantics beyond form fields",
    "1.4.1": "required fields, errors, selected tabs, links in body text or chart lines shown only by red, "
             "green or another hue; colour blind users can't tell which field failed, which link is a link or "
             "which line is which",
    "1.4.2": "a video, advert, background music or sound plays by itself when the page loads and there's no "
             "pause, mute or volume button; screen reader users can't hear their speech output over the "
             "autoplaying sound",
    "1.4.3": "light grey text on white, white text on a pale brand colour, placeholder text or small print too "
             "faint to read; fails the 4.5 to 1 ratio at AA, 3 to 1 for big bold headings; low vision users "
             "squint or can't read",
    "1.4.4": "zooming the browser or increasing font size to 200% makes text overlap, get cut off, hide behind "
             "other boxes or buttons disappear; fixed pixel heights clip content; pinch zoom disabled on "
             "mobile",
    "1.4.5": "headings, banners, menus, quotes or buttons made as pictures of words, text baked into a JPG or "
             "PNG; can't be resized cleanly, recoloured or read by a screen reader; logos are fine at AA",
    "1.4.6": "stronger AAA colour contrast: asks whether grey body text hits 7 to 1, or 4.5 to 1 for large "
             "headings; people with more severe low vision still struggle with text that only meets the AA "
             "level",
    "1.4.7": "a recorded narration, podcast or spoken audio with music or noise behind the voice so loud that "
             "hard of hearing listeners can't make out the words; asks for a way to turn background sound off "
             "or keep it 20 dB quieter",
    "1.4.8": "long paragraphs with lines too wide, justified text with uneven gaps, cramped line spacing, no "
             "way to pick your own text and background colours, and text that needs side scrolling when "
             "enlarged; dyslexic readers lose their place, AAA",
    "1.4.9": "at AAA, any text shown as a picture beyond pure decoration or a logo, such as styled quotes, "
             "headings or infographic labels as images; people want real text they can restyle, enlarge or "
             "have read out",
    "1.4.10": "on a phone or at 400% zoom, a 320 pixel wide viewport makes the page scroll sideways, text runs "
              "off screen, a fixed-width layout or sticky panel covers content; low vision users must pan left "
              "and right for every line",
    "1.4.11": "icons, input borders, checkbox outlines, focus rings, toggle states, chart bars and graph lines "
              "too faint against the background, under 3 to 1; low vision users can't see where a text field or "
              "button is",
    "1.4.12": "when users apply a bookmarklet or custom stylesheet to widen line height, letter or word "
              "spacing, text is cut off, overlaps or overflows buttons and fixed-height boxes; dyslexic readers "
              "who need more spacing lose content",
    "1.4.13": "tooltips, hover menus or popovers that vanish when you move the mouse onto them, can't be closed "
              "with Escape and cover other content, or disappear before you read them; magnifier users lose the "
              "popup as they pan",
    "2.1.1": "can't reach or use a button, menu, dropdown, date picker, slider or carousel without a mouse; "
             "clickable divs ignore Enter and Space, hover-only menus; screen reader and switch users say "
             "nothing happens when they press keys",
    "2.1.2": "focus stuck inside a modal, chat widget, embedded video player, map or iframe and Tab or Escape "
             "won't move out; keyboard users must reload the page or close the browser to escape",
    "2.1.3": "stricter AAA keyboard rule with no exception for freehand input: drawing, signature pads, "
             "painting or handwriting features that only work with a mouse or finger still fail, even where "
             "level A would excuse path-dependent input",
    "2.1.4": "single-letter hotkeys like s, j, k or ? fire by accident when speech input users dictate or "
             "someone types in the wrong place; no setting to switch off or remap shortcuts to use Ctrl or Alt",
    "2.2.1": "session or form times out and logs me out with no warning; checkout, booking or exam countdown "
             "gives no way to ask for more time; slow readers, screen reader and cognitive disability users "
             "lose their work",
    "2.2.2": "auto-playing carousel, slideshow, news ticker, scrolling marquee, blinking banner, animated gif "
             "or live-updating feed with no pause or stop button; people with attention or reading "
             "difficulties can't read anything while it moves",
    "2.2.3": "at AAA, any task that depends on a countdown or speed at all, such as timed quizzes, auctions, "
             "limited-time offers or reaction games, shuts out people who need more time; asks whether "
             "removing the clock entirely is required",
    "2.2.4": "pop-up notifications, chat prompts, cookie or survey overlays, auto-refreshing news and live "
             "alerts keep interrupting me while I read or fill a form; users want a way to delay or mute them "
             "(AAA, emergencies excepted)",
    "2.2.5": "after the login expires and I sign back in, my half-filled application, cart or long post is "
             "gone and I must start over; asks how to keep form data across re-login (AAA)",
    "2.2.6": "users are never told how long they can stay idle before the site drops their unsaved answers; a "
             "survey or draft quietly vanishes after lunch; asks whether saving data for a day avoids the "
             "warning (AAA)",
    "2.3.1": "strobing video, flickering gif, flashing banner or game effect that can trigger seizures in "
             "people with photosensitive epilepsy; asks how many flashes per second are allowed and how to "
             "test for red flashes (level A)",
    "2.3.2": "the stricter AAA flashing rule: nothing may flash more than three times a second at all, even "
             "small or low-contrast flashes that pass the level A area and brightness thresholds; video "
             "intros, strobe effects, loading spinners",
    "2.3.3": "parallax scrolling, zooming page transitions, sliding panels and bouncing effects triggered by "
             "scroll or click make users with vestibular disorders dizzy or nauseous; asks how to honour "
             "prefers-reduced-motion or add a turn-off animations toggle (AAA)",
    "2.4.1": "no skip to main content link, so keyboard and screen reader users must tab through the whole "
             "header, mega menu and sidebar on every page; missing landmarks or headings to jump past repeated "
             "navigation",
    "2.4.2": "browser tab just says untitled, home, index or the same site name on every page; screen reader "
             "users can't tell which page or tab they're on; single page apps that never update the document "
             "title element",
    "2.4.3": "pressing Tab jumps around the page in a strange order, skips into a hidden menu or lands behind "
             "an open dialog; positive tabindex values, CSS reordering, focus not moved into a new modal or "
             "back after closing",
    "2.4.4": "lots of links that just say click here, read more, learn more or more info; screen reader users "
             "listing links can't tell where each goes; icon-only links, and asks whether surrounding sentence "
             "or list item context counts",
    "2.4.5": "only one route to a page, like a deep menu with no site search, sitemap, index or related links; "
             "users who can't manage the navigation have no other way to find content (AA, not for steps in "
             "checkout)",
    "2.4.6": "vague or misleading headings and form labels such as details, info, field 1 or a heading that "
             "doesn't match the section; users scanning by heading can't tell what each part is about; "
             "wording, not markup (AA)",
    "2.4.7": "can't see where I am when tabbing because outline none removed the focus ring; buttons and links "
             "show no highlight when focused; keyboard users lose their place completely (AA)",
    "2.4.8": "no breadcrumb trail, highlighted current menu item or step indicator, so users lost in a big "
             "site or multi-step flow can't tell where they are within it (AAA)",
    "2.4.9": "the AAA version of link text: each link must make sense read on its own, with no reliance on the "
             "surrounding sentence or table cell; read more, here and download links that only make sense in "
             "context fail",
    "2.4.10": "long articles, terms, help pages or reports with no subheadings break up the text, making them a "
              "wall of text that's hard to scan or navigate by heading (AAA)",
    "2.4.11": "when tabbing, the focused link or field disappears completely behind a sticky header, cookie "
              "banner, chat button or fixed footer so keyboard users can't see it at all (AA, partially visible "
              "passes)",
    "2.4.12": "the stricter AAA version: even part of the focused control being cut off by a sticky toolbar, "
              "floating chat bubble or overlay fails; users want the whole focused item fully in view",
    "2.4.13": "focus ring is too thin, faint or low-contrast to notice, like a 1px light grey outline or subtle "
              "colour shift; asks how thick and how much change between focused and unfocused looks is enough "
              "(AAA)",
    "2.5.1": "map, gallery or carousel that only works with pinch to zoom, two-finger swipe or drawing a "
             "pattern; people using one finger, a head pointer or mouth stick need plain buttons like plus, "
             "minus, next and previous",
    "2.5.2": "action fires the moment I touch or press down, so I can't slide my finger off to cancel; "
             "accidental purchases or deletes for users with tremors; mousedown or touchstart handlers instead "
             "of click",
    "2.5.3": "voice control users say click Send but nothing happens because the hidden aria-label says "
             "something different like submit-btn; accessible name doesn't contain or start with the words "
             "shown on the button or link",
    "2.5.4": "features that only work by shaking or tilting the phone, like shake to undo or tilt to scroll; "
             "wheelchair mounted devices trigger them by accident; need an on-screen button and a way to turn "
             "motion off",
    "2.5.5": "the larger AAA touch target rule: buttons, icons and links should be at least 44 pixels square; "
             "tiny close X, checkboxes and pagination numbers are hard for people with tremors or large "
             "fingers to hit on mobile",
    "2.5.6": "site blocks keyboard when it detects a touchscreen, or disables mouse on tablets; users who "
             "switch between touch, stylus, keyboard and mouse or attach a switch device get locked out of one "
             "input (AAA)",
    "2.5.7": "sortable lists, kanban boards, sliders, file drop zones and map panning that only work by drag "
             "and drop; people who can't hold and move a pointer need click or tap alternatives like move up "
             "or down buttons (AA)",
    "2.5.8": "tiny close X, icon buttons, checkboxes or pagination links smaller than 24 pixels packed tightly "
             "together so users mis-tap the wrong one on mobile; asks about spacing exception and inline links "
             "(AA)",
    "3.1.1": "screen reader reads our french or german site with an english accent because the html tag has no "
             "lang attribute or the wrong one; missing lang on the root element, template copied from another "
             "locale, speech synthesis mispronounces everything",
    "3.1.2": "a quote, menu item or paragraph in spanish inside an english page gets read with the wrong "
             "voice; language switcher links like deutsch or français mispronounced; no lang on a span or "
             "block for foreign passages, at AA",
    "3.1.3": "jargon, idioms, slang or terms with a special meaning in our field confuse readers; no glossary, "
             "tooltip or definition link for technical words; people with cognitive disabilities or non-native "
             "speakers take figurative phrases literally, AAA",
    "3.1.4": "acronyms and initialisms like ETA, GDPR or dept. are never spelled out; no expansion on first "
             "use, no abbr element or glossary; screen reader users and people with reading difficulties can't "
             "tell what the short form means, AAA",
    "3.1.5": "our terms, instructions or health leaflet are too hard to read, long sentences and dense "
             "academic wording; need a plain language summary, easy read version, illustrations or audio for "
             "people with dyslexia or learning disabilities, AAA",
    "3.1.6": "words spelled the same but said differently, like read, lead or names in japanese, chinese or "
             "hebrew without vowel marks, are ambiguous; no ruby annotation, phonetic guide or audio "
             "pronunciation so the reader can't tell which word is meant, AAA",
    "3.2.1": "just tabbing onto a field, link or dropdown opens a popup, submits the form, jumps to another "
             "page or moves focus elsewhere; keyboard and screen reader users get thrown somewhere unexpected "
             "only by focusing, before activating anything",
    "3.2.2": "picking an option in a select menu, ticking a checkbox or typing into a field instantly "
             "navigates away, submits or reloads the page with no warning; a country dropdown that redirects "
             "on change; no go button before the page changes",
    "3.2.3": "the main menu, footer links or sidebar show up in a different order on each page; the search box "
             "and nav bar move around between pages, so screen magnifier and low vision users can't predict "
             "where to look, AA",
    "3.2.4": "the same function has different names or icons on different pages: a search button labelled "
             "search here and find there, a download icon with varying alt text, print vs export; inconsistent "
             "labelling across the site confuses users, AA",
    "3.2.5": "pages that auto refresh, redirect after a timer, open new windows or tabs without asking, or pop "
             "up dialogs on their own; users want every change to happen only when they click, or a setting to "
             "switch it off, AAA",
    "3.2.6": "the contact us link, phone number, chat bot or FAQ link sits in the header on one page and "
             "buried in the footer on another; people needing support can't find help in the same spot across "
             "the site, level A",
    "3.3.1": "the form error only shows as a red outline or an icon with no message; the page says something "
             "is wrong but not which field; screen reader users submit and hear nothing; error text missing or "
             "not tied to the input",
    "3.3.2": "form fields with only placeholder text that vanishes when typing, no visible label, required "
             "fields not marked, date format or password rules never explained; users don't know what to enter "
             "before they start typing",
    "3.3.3": "the error says invalid input but doesn't say how to fix it; date in the wrong format, postcode "
             "rejected, password too weak without telling the expected pattern or offering a suggestion like "
             "did you mean, AA",
    "3.3.4": "online payment, bank transfer, contract signing, deleting an account or submitting an exam "
             "happens in one click with no review page, no confirm step, no undo or cancellation window; a "
             "mistyped amount can't be corrected, AA",
    "3.3.5": "complex forms such as tax returns or insurance applications with no help text, info icons, "
             "examples or explanations next to the fields; users with cognitive disabilities need guidance for "
             "each question in context, AAA",
    "3.3.6": "any form, even a simple contact or survey form, submits straight away with no chance to review, "
             "check or undo the answers; AAA extension of the review and confirm step to every submission, not "
             "only money or legal ones",
    "3.3.7": "checkout asks for the shipping address again on the billing step, a multi-step application makes "
             "me retype my name and email already given; no same as above checkbox or autofill of earlier "
             "answers, tiring for people with memory or motor issues",
    "3.3.8": "login requires remembering a password with paste blocked, a captcha puzzle, a math question or "
             "retyping a code by hand; password managers can't fill it; people with memory or dyslexia get "
             "locked out; AA allows image recognition captchas",
    "3.3.9": "stricter AAA version of login accessibility: even picking pictures of traffic lights or "
             "recognising my own uploaded photo counts as a memory test; sign in must work with password "
             "managers, copy paste, passkeys or email links instead",
    "4.1.1": "people still ask about html validation, duplicate ids, unclosed tags and improperly nested "
             "elements; removed from WCAG 2.2, it's now obsolete and always considered satisfied, so validator "
             "errors alone are no longer a failure",
    "4.1.2": "custom buttons built from divs or spans, toggles, tabs, accordions or dropdowns that a screen "
             "reader announces as nothing or just clickable; icon buttons with no accessible name; expanded, "
             "checked or selected state not announced; missing aria roles",
    "4.1.3": "messages like added to cart, 5 results found, saving or form sent appear on screen but the "
             "screen reader says nothing; toast notifications and search result counts need an aria live "
             "region or role status without moving focus, AA",
}

__all__ = ["FAILURE_NOTES"]
