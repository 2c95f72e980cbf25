"""Each upload checked by its content, with a one-line reason per refusal, then resized and
re-encoded by us (no metadata of the upload goes further)."""
import hashlib
import io

import pytest
from PIL import Image

from groundchat.attachments.uploads import ImagesRefused, Upload
from groundchat.attachments.validation import ImageLimits, prepare_image, prepare_images
from tests.attachments.images import animated_gif, bomb_png, photo_with_location, picture

LIMITS = ImageLimits()


def refusal(uploads, limits=LIMITS) -> str:
    with pytest.raises(ImagesRefused) as caught:
        prepare_images(uploads, limits)
    assert caught.value.code == "bad-image"
    assert "\n" not in caught.value.message
    return caught.value.message


def test_a_screenshot_is_resized_inside_the_limits_and_named_by_its_hash():
    image = prepare_image(Upload("page.png", picture(1920, 1080)), LIMITS)
    assert (image.media_type, image.width, image.height) == ("image/png", 1429, 804)
    assert image.sha256 == hashlib.sha256(image.data).hexdigest()
    assert image.alt == "page.png"  # the file name stands in for alt text
    with Image.open(io.BytesIO(image.data)) as sent:
        assert (sent.format, sent.size) == ("PNG", (1429, 804))


def test_a_small_image_is_kept_at_its_size():
    image = prepare_image(Upload("x.png", picture(300, 200)), LIMITS)
    assert (image.width, image.height) == (300, 200)


def test_type_is_read_from_the_content_not_the_name():
    # A JPEG named .png is a JPEG; a text file named .png is refused.
    image = prepare_image(Upload("shot.png", picture(64, 48, "JPEG")), LIMITS)
    assert image.media_type == "image/jpeg"
    message = refusal([Upload("shot.png", b"<svg xmlns='http://www.w3.org/2000/svg'></svg>")])
    assert message == 'image 1 ("shot.png") is not a PNG, JPEG, WebP or GIF image (checked by its content, not its name)'
    assert "not a PNG" in refusal([Upload("doc.pdf", b"%PDF-1.7\n" + b"0" * 100)])
    assert "not a PNG" in refusal([Upload("bmp.png", picture(16, 16, "BMP"))])  # a real image, not one we take


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_a_truncated_file_is_refused(fmt):
    whole = picture(400, 300, fmt)
    assert "damaged or truncated" in refusal([Upload(f"cut.{fmt.lower()}", whole[: len(whole) // 2])])


def test_a_decompression_bomb_is_refused_before_it_is_decoded():
    bomb = bomb_png()  # 10,000 × 10,000 pixels in a few hundred KB
    assert len(bomb) < 300_000
    message = refusal([Upload("tiny.png", bomb)])
    assert message.startswith('image 1 ("tiny.png") ')
    assert "decompression bomb" in message


def test_an_image_over_the_pixel_limit_is_refused_from_its_header():
    limits = ImageLimits(max_pixels=1_000_000)
    assert refusal([Upload("big.png", picture(1200, 1000))], limits) == \
        'image 1 ("big.png") is 1200 × 1000 pixels (1.2 megapixels), over the limit of 1 megapixels'
    # Under the default limit the same image passes; a 30 MP canvas (a bomb, too) does not.
    assert prepare_images([Upload("big.png", picture(1200, 1000))], LIMITS)[0].width == 1174  # resized to 1.15 MP
    assert "over the limit of 25 megapixels" in refusal([Upload("huge.png", bomb_png(6000, 5000))])


def test_more_than_five_images_are_refused():
    six = [Upload(f"{i}.png", picture(20, 20)) for i in range(6)]
    assert refusal(six) == "6 images: at most 5 per question"
    assert len(prepare_images(six[:5], LIMITS)) == 5


def test_sizes_per_image_and_per_question():
    limits = ImageLimits(max_image_bytes=20_000, max_images_bytes=30_000)
    big = Upload("big.png", b"\x89PNG" + b"0" * 25_000)
    assert refusal([big], limits) == 'image 1 ("big.png") is 24 KiB, over the limit of 20 KiB per image'
    pair = [Upload("a.png", b"0" * 16_000), Upload("b.png", b"0" * 16_000)]
    assert refusal(pair, limits) == "the images add up to 31 KiB, over the limit of 29 KiB per question"
    assert refusal([Upload("empty.png", b"")]) == 'image 1 ("empty.png") is empty'


def test_the_refusal_names_the_bad_image_among_good_ones():
    uploads = [Upload("ok.png", picture(40, 40)), Upload("C:\\Users\\me\\notes.txt", b"just text")]
    assert refusal(uploads).startswith('image 2 ("notes.txt") is not a PNG')


def test_exif_location_is_dropped_and_orientation_applied():
    image = prepare_image(Upload("phone.jpg", photo_with_location(640, 480)), LIMITS)
    assert (image.media_type, image.width, image.height) == ("image/jpeg", 480, 640)  # turned upright
    with Image.open(io.BytesIO(image.data)) as sent:
        assert not sent.getexif()  # no GPS, no orientation: our own encoding carries none
    assert b"Exif" not in image.data[:200]


def test_a_gif_goes_as_its_first_frame_in_png():
    image = prepare_image(Upload("anim.gif", animated_gif()), LIMITS)
    assert image.media_type == "image/png"
    with Image.open(io.BytesIO(image.data)) as sent:
        assert getattr(sent, "n_frames", 1) == 1


@pytest.mark.parametrize("mode, fmt, media_type", [
    ("RGBA", "PNG", "image/png"), ("L", "PNG", "image/png"), ("RGBA", "WEBP", "image/webp"), ("CMYK", "JPEG", "image/jpeg"),
])
def test_modes_are_kept_or_widened_for_the_encoder(mode, fmt, media_type):
    image = prepare_image(Upload(f"x.{fmt.lower()}", picture(50, 40, fmt, mode=mode)), LIMITS)
    assert image.media_type == media_type
    with Image.open(io.BytesIO(image.data)) as sent:
        assert sent.size == (50, 40)


def test_alt_text_is_the_users_or_the_file_name():
    assert prepare_image(Upload("a.png", picture(20, 20), alt="  The submit button, low contrast "), LIMITS).alt == \
        "The submit button, low contrast"
    assert prepare_image(Upload("a.png", picture(20, 20), alt=""), LIMITS).alt == "a.png"
    assert prepare_image(Upload("", picture(20, 20)), LIMITS, position=3).alt == "image 3"
    assert "alt text is over 300 characters" in refusal([Upload("a.png", picture(20, 20), alt="x" * 301)])


def _icc_profile() -> bytes:
    from PIL import ImageCms

    return ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


@pytest.mark.parametrize("fmt, carried", [
    ("JPEG", {"comment": b"MARKER-comment-owner-ada-lovelace"}),
    ("JPEG", {"icc_profile": "icc"}),
    ("PNG", {"icc_profile": "icc"}),
    ("PNG", {"pnginfo": "text"}),
    ("WEBP", {"icc_profile": "icc"}),
    ("WEBP", {"xmp": b"<x:xmpmeta>MARKER-xmp-owner</x:xmpmeta>"}),
])
def test_no_metadata_survives_the_re_encoding(fmt, carried):
    """Comments, colour profiles (which can name a device or a person) and text chunks never travel."""
    from PIL import PngImagePlugin

    save = dict(carried)
    markers = [v for v in save.values() if isinstance(v, bytes)]
    if save.get("icc_profile") == "icc":
        save["icc_profile"] = _icc_profile()
    if save.get("pnginfo") == "text":
        info = PngImagePlugin.PngInfo()
        info.add_text("Author", "MARKER-png-text-author")
        save["pnginfo"] = info
        markers.append(b"MARKER-png-text-author")
    original = picture(200, 120, fmt, **save)
    with Image.open(io.BytesIO(original)) as made:  # the test's own file does carry them
        assert all(m in original for m in markers) and set(made.info) & {"icc_profile", "comment", "xmp", "Author"}
    image = prepare_image(Upload(f"shot.{fmt.lower()}", original), LIMITS)
    assert not [m for m in markers if m in image.data]
    with Image.open(io.BytesIO(image.data)) as sent:
        assert not {"icc_profile", "comment", "exif", "xmp", "Author"} & set(sent.info)
